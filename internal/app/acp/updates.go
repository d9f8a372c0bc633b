package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// turn follows one prompt's events and sends what the editor shows. It
// runs on the session's subscription goroutine, one event at a time.
type turn struct {
	a *server
	s *acpSession
	// tools are the running calls by id; mu guards it, because a
	// permission question reads it from the tool's goroutine.
	mu    sync.Mutex
	tools map[string]*toolView
}

// toolView is what was said of a tool call, for its later updates.
type toolView struct {
	name, path string
	args       json.RawMessage
	before     *string // a write's file before it ran; nil when new
}

// retryMeta is the structured _meta of a retry's update, for editors that
// read it; the same facts as rally's auto_retry_start event.
func retryMeta(e session.AutoRetryStartEvent) map[string]any {
	m := map[string]any{"attempt": e.Attempt, "maxAttempts": e.MaxAttempts, "delayMs": e.DelayMs, "errorClass": e.ErrorClass.String()}
	if e.SwitchedTo != "" {
		m["switchedTo"] = e.SwitchedTo
	}
	return map[string]any{"rally": map[string]any{"retry": m}}
}

func (t *turn) event(e session.Event) {
	send := func(u sdk.SessionUpdate) { t.a.send(t.s.id, u) }
	switch e := e.(type) {
	case session.MessageUpdateEvent:
		if ev := e.Assistant; ev != nil && ev.Delta != "" {
			switch ev.Type {
			case llm.EventTextDelta:
				send(sdk.UpdateAgentMessageText(ev.Delta))
			case llm.EventThinkingDelta:
				send(sdk.UpdateAgentThoughtText(ev.Delta))
			}
		}
	case session.MessageDiscardedEvent:
		// ACP cannot take text back: say plainly that what follows
		// replaces it, so the editor's reader is not misled.
		send(sdk.UpdateAgentMessageText("\n\n— the stream dropped; the answer starts again below —\n\n"))
	case session.AutoRetryStartEvent:
		if e.Resume != "" {
			send(reconnecting(e))
			return
		}
		msg := fmt.Sprintf("Retrying (%d/%d) in %s: %s", e.Attempt, e.MaxAttempts, wait(e.DelayMs), firstLine(e.ErrorMessage))
		if e.SwitchedTo != "" {
			msg = fmt.Sprintf("Switched to %s (%d/%d): %s", e.SwitchedTo, e.Attempt, e.MaxAttempts, firstLine(e.ErrorMessage))
		}
		u := sdk.UpdateAgentMessageText("\n" + msg + "\n")
		u.AgentMessageChunk.Meta = retryMeta(e)
		send(u)
	case session.StreamResumedEvent:
		send(reconnected(e))
	case session.AutoRetryEndEvent:
		if !e.Success && e.FinalError == session.RetryCancelled {
			send(sdk.UpdateAgentMessageText("\nRetry cancelled.\n"))
		}
	case session.CompactionStartEvent:
		send(sdk.UpdateAgentThoughtText(fmt.Sprintf("Compacting the conversation (%s)…\n", e.Reason)))
	case session.CompactionEndEvent:
		if c := e.Result; c != nil {
			send(sdk.UpdateAgentThoughtText(fmt.Sprintf("Compacted: about %d tokens before.\n", c.TokensBefore)))
		}
	case session.ToolExecutionStartEvent:
		t.toolStart(e.ToolCallID, e.ToolName, e.Args, send)
	case session.ToolExecutionEndEvent:
		t.toolEnd(e.ToolCallID, e.IsError, e.Result, send)
	}
}

// wait is a delay as people read it: "2s", "1m30s".
func wait(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// kind is the ACP kind of a built-in tool, for the editor's icon.
func kind(name string) sdk.ToolKind {
	switch name {
	case "read":
		return sdk.ToolKindRead
	case "write", "edit":
		return sdk.ToolKindEdit
	case "bash":
		return sdk.ToolKindExecute
	}
	return sdk.ToolKindOther
}

// toolArgs are the argument fields the built-in tools share (with the
// names some models use).
type toolArgs struct {
	Path, FilePath     string
	Command            string
	OldText, OldString string
	NewText, NewString string
	Content            string
}

func parseArgs(raw json.RawMessage) toolArgs {
	var a struct {
		Path      string `json:"path"`
		FilePath  string `json:"file_path"`
		Command   string `json:"command"`
		OldText   string `json:"oldText"`
		OldString string `json:"old_string"`
		NewText   string `json:"newText"`
		NewString string `json:"new_string"`
		Content   string `json:"content"`
	}
	json.Unmarshal(raw, &a)
	return toolArgs{Path: a.Path, FilePath: a.FilePath, Command: a.Command, OldText: a.OldText, OldString: a.OldString,
		NewText: a.NewText, NewString: a.NewString, Content: a.Content}
}

func (a toolArgs) path() string {
	if a.Path != "" {
		return a.Path
	}
	return a.FilePath
}

// title is the line the editor shows for a call.
func title(name string, a toolArgs) string {
	switch {
	case name == "bash" && a.Command != "":
		return firstLine(a.Command)
	case a.path() != "":
		return name + " " + a.path()
	}
	return name
}

// maxBefore bounds the file read to show a write as a diff.
const maxBefore = 1 << 20

func (t *turn) toolStart(id, name string, rawArgs json.RawMessage, send func(sdk.SessionUpdate)) {
	args := parseArgs(rawArgs)
	v := &toolView{name: name, args: rawArgs, path: absPath(args.path())}
	if name == "write" && v.path != "" {
		if fi, err := os.Stat(v.path); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxBefore {
			if b, err := os.ReadFile(v.path); err == nil {
				s := string(b)
				v.before = &s
			}
		}
	}
	t.mu.Lock()
	t.tools[id] = v
	t.mu.Unlock()
	opts := []sdk.ToolCallStartOpt{
		sdk.WithStartKind(kind(name)),
		sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
		sdk.WithStartRawInput(rawArgs),
	}
	if v.path != "" {
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: v.path}}))
	}
	send(sdk.StartToolCall(sdk.ToolCallId(id), title(name, args), opts...))
}

func (t *turn) toolEnd(id string, isError bool, result *tool.Result, send func(sdk.SessionUpdate)) {
	t.mu.Lock()
	v := t.tools[id]
	delete(t.tools, id)
	t.mu.Unlock()
	status := sdk.ToolCallStatusCompleted
	if isError {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if v != nil && !isError {
		args := parseArgs(v.args)
		switch v.name {
		case "edit":
			old, nw := args.OldText, args.NewText
			if old == "" {
				old, nw = args.OldString, args.NewString
			}
			content = append(content, sdk.ToolDiffContent(v.path, nw, old))
		case "write":
			if v.before != nil {
				content = append(content, sdk.ToolDiffContent(v.path, args.Content, *v.before))
			} else {
				content = append(content, sdk.ToolDiffContent(v.path, args.Content))
			}
		}
	}
	if text := resultText(result); text != "" && (len(content) == 0 || isError) {
		content = append(content, sdk.ToolContent(sdk.TextBlock(text)))
	}
	send(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content)))
}

func resultText(r *tool.Result) string {
	if r == nil {
		return ""
	}
	var sb strings.Builder
	for _, c := range r.Content {
		if c.Type == llm.TextType {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// history is the conversation so far as updates, for session/load: user
// and agent text, thinking, and each tool call with its result.
func history(ms []llm.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	results := map[string]*llm.Message{}
	for i := range ms {
		if ms[i].Role == llm.ToolResult {
			results[ms[i].ToolCallID] = &ms[i]
		}
	}
	for i := range ms {
		m := &ms[i]
		switch m.Role {
		case llm.User:
			if t := m.TextOf(); t != "" {
				out = append(out, sdk.UpdateUserMessageText(t))
			}
		case llm.Assistant:
			for _, c := range m.Content {
				switch c.Type {
				case llm.ThinkingType:
					if c.Thinking != "" {
						out = append(out, sdk.UpdateAgentThoughtText(c.Thinking))
					}
				case llm.TextType:
					if c.Text != "" {
						out = append(out, sdk.UpdateAgentMessageText(c.Text))
					}
				case llm.ToolCallType:
					args := parseArgs(c.Arguments)
					status := sdk.ToolCallStatusCompleted
					r := results[c.ID]
					if r == nil || r.IsError {
						status = sdk.ToolCallStatusFailed
					}
					opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kind(c.Name)), sdk.WithStartStatus(status), sdk.WithStartRawInput(json.RawMessage(c.Arguments))}
					if r != nil {
						opts = append(opts, sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(r.TextOf()))}))
					}
					out = append(out, sdk.StartToolCall(sdk.ToolCallId(c.ID), title(c.Name, args), opts...))
				}
			}
		}
	}
	return out
}
