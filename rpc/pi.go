package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rally-agent/rally/internal/htmlexport"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// This file answers the commands of pi's protocol beyond the retry core:
// models and thinking levels, queue modes, the user's own shell commands,
// export, and moving between session files. Shapes follow pi's
// docs/rpc.md (0.73) and docs/rpc-commands.md (1.6).

// CycleModelResult is the data of cycle_model.
type CycleModelResult struct {
	Model         llm.Model `json:"model"`
	ThinkingLevel string    `json:"thinkingLevel"`
	// IsScoped is pi's: whether the cycle ran over a --models scope.
	// rally cycles over every available model.
	IsScoped bool `json:"isScoped"`
}

// ThinkingLevelResult is the data of cycle_thinking_level.
type ThinkingLevelResult struct {
	Level string `json:"level"`
}

// ThinkingLevelsResult is the data of get_available_thinking_levels.
type ThinkingLevelsResult struct {
	Levels []string `json:"levels"`
}

// QueueResult is the data of clear_queue: the text of each message taken
// off the queues.
type QueueResult struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// BashResult is the data of bash.
type BashResult struct {
	Output string `json:"output"`
	// ExitCode is absent when the command did not exit (cancelled, killed).
	ExitCode       *int   `json:"exitCode,omitempty"`
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

// PathResult is the data of export_html.
type PathResult struct {
	Path string `json:"path"`
}

// ForkResult is the data of fork (switch_session and clone answer with a
// NewSessionResult).
type ForkResult struct {
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

// ForkMessage is a user message fork can start from.
type ForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkMessagesResult is the data of get_fork_messages.
type ForkMessagesResult struct {
	Messages []ForkMessage `json:"messages"`
}

// EntriesResult is the data of get_entries: entries as written in the
// session file, and the id of the one the session continues from (null
// for an empty session).
type EntriesResult struct {
	Entries []json.RawMessage `json:"entries"`
	LeafID  *string           `json:"leafId"`
}

// TreeNode is one entry of get_tree with the entries that continue it.
type TreeNode struct {
	Entry    json.RawMessage `json:"entry"`
	Children []*TreeNode     `json:"children"`
}

// TreeResult is the data of get_tree.
type TreeResult struct {
	Tree   []*TreeNode `json:"tree"`
	LeafID *string     `json:"leafId"`
}

// SlashCommand is one of get_commands' commands.
type SlashCommand struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
}

// CommandsResult is the data of get_commands. pi lists its extensions'
// commands, prompt templates and skills there, which a client runs by
// sending "/name" as a prompt; its built-in interactive commands are not
// listed because a prompt would not run them. rally has none of the
// three, and its slash commands (/compact, /model, …) are the terminal
// UI's, so the list is empty, as pi's is without them: a client that
// offered "/compact" from it would send those words to the model.
type CommandsResult struct {
	Commands []SlashCommand `json:"commands"`
}

// handlePi answers the commands of this file; ok is false for others.
func (s *server) handlePi(c Command, sess *session.Session) (r *Response, handled bool) {
	resp := func(x Response) (*Response, bool) { return &x, true }
	switch c.Type {
	case CmdCycleModel:
		return resp(s.cycleModel(c, sess))
	case CmdSetThinkingLevel:
		if !llm.ValidThinking(c.Level) {
			return resp(fail(c.ID, c.Type, fmt.Sprintf("unknown thinking level %q (levels: %s)", c.Level, strings.Join(llm.AllThinkingLevels(), ", "))))
		}
		sess.SetThinking(clampThinking(sess.State().Model, c.Level))
	case CmdCycleThinkingLevel:
		st := sess.State()
		levels := llm.ThinkingLevels(st.Model)
		if len(levels) < 2 {
			return resp(ok(c.ID, c.Type, nil)) // pi: null data for a model that does not reason
		}
		next := levels[(slices.Index(levels, thinkingOf(st))+1)%len(levels)]
		sess.SetThinking(next)
		return resp(ok(c.ID, c.Type, ThinkingLevelResult{Level: next}))
	case CmdGetAvailableThinkingLevels:
		return resp(ok(c.ID, c.Type, ThinkingLevelsResult{Levels: llm.ThinkingLevels(sess.State().Model)}))
	case CmdSetSteeringMode:
		if err := sess.SetSteeringMode(c.Mode); err != nil {
			return resp(fail(c.ID, c.Type, err.Error()))
		}
	case CmdSetFollowUpMode:
		if err := sess.SetFollowUpMode(c.Mode); err != nil {
			return resp(fail(c.ID, c.Type, err.Error()))
		}
	case CmdClearQueue:
		steer, follow := sess.ClearQueue()
		return resp(ok(c.ID, c.Type, QueueResult{Steering: texts(steer), FollowUp: texts(follow)}))
	case CmdBash:
		return s.bash(c, sess), true
	case CmdAbortBash:
		s.mu.Lock()
		if s.stopBash != nil {
			s.stopBash()
		}
		s.mu.Unlock()
	case CmdExportHTML:
		return resp(s.exportHTML(c, sess))
	case CmdSwitchSession:
		r := s.replace(c, c.SessionPath, NewSessionResult{})
		if r.Success {
			s.resume()
		}
		return resp(r)
	case CmdFork:
		return resp(s.fork(c, sess))
	case CmdClone:
		file := sess.State().SessionFile
		if file == "" {
			return resp(fail(c.ID, c.Type, "clone needs a saved session (this one runs with --no-session)"))
		}
		ld, err := journal.Load(file)
		if err != nil {
			return resp(fail(c.ID, c.Type, err.Error()))
		}
		leaf := ""
		if n := len(ld.Entries); n > 0 {
			leaf = ld.Entries[n-1].ID
		}
		return resp(s.branch(c, file, leaf, ld.Cwd, NewSessionResult{}))
	case CmdGetForkMessages:
		msgs := []ForkMessage{}
		if file := sess.State().SessionFile; file != "" {
			ld, err := journal.Load(file)
			if err != nil {
				return resp(fail(c.ID, c.Type, err.Error()))
			}
			msgs, _ = forkPoints(ld)
		}
		return resp(ok(c.ID, c.Type, ForkMessagesResult{Messages: msgs}))
	case CmdGetEntries:
		return resp(entries(c, sess.State().SessionFile))
	case CmdGetTree:
		return resp(tree(c, sess.State().SessionFile))
	case CmdGetCommands:
		return resp(ok(c.ID, c.Type, CommandsResult{Commands: []SlashCommand{}}))
	case CmdExtensionUIResponse:
		s.cfg.Dialogs.answer(c)
		return nil, true // pi answers nothing either
	default:
		return nil, false
	}
	return resp(ok(c.ID, c.Type, nil))
}

// clampThinking is the level a model takes for the one asked: a model
// that does not reason stays "off", as pi clamps a level to what the
// model supports.
func clampThinking(m llm.Model, level string) string {
	if !slices.Contains(llm.ThinkingLevels(m), level) {
		return llm.ThinkingOff
	}
	return level
}

func thinkingOf(st session.State) string {
	if st.Thinking == "" {
		return llm.ThinkingOff
	}
	return st.Thinking
}

func texts(ms []llm.Message) []string {
	out := make([]string, 0, len(ms))
	for i := range ms {
		out = append(out, ms[i].TextOf())
	}
	return out
}

// cycleModel moves to the model after the current one in
// get_available_models' list; null data when there is only one.
func (s *server) cycleModel(c Command, sess *session.Session) Response {
	models := s.models(sess)
	if len(models) < 2 {
		return ok(c.ID, c.Type, nil)
	}
	cur := sess.State().Model
	i := slices.IndexFunc(models, func(m llm.Model) bool { return m.Provider == cur.Provider && m.ID == cur.ID })
	next := models[(i+1)%len(models)]
	r := s.setModel(Command{ID: c.ID, Type: c.Type, Provider: next.Provider, ModelID: next.ID}, sess)
	if !r.Success {
		return r
	}
	st := sess.State()
	return ok(c.ID, c.Type, CycleModelResult{Model: st.Model, ThinkingLevel: thinkingOf(st)})
}

// bash runs the user's command off the command loop (abort_bash and the
// rest are still read meanwhile) and answers when it ends. Its output
// joins the context with the next prompt, as pi's does, unless the
// command said excludeFromContext.
func (s *server) bash(c Command, sess *session.Session) *Response {
	s.mu.Lock()
	if s.stopBash != nil {
		s.mu.Unlock()
		r := fail(c.ID, c.Type, "a bash command is already running; abort_bash stops it")
		return &r
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.stopBash = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := tool.Bash{Dir: s.cfg.Dir}.Exec(ctx, c.Shell)
		s.mu.Lock()
		s.stopBash = nil
		s.mu.Unlock()
		cancel()
		if err != nil {
			s.respond(fail(c.ID, c.Type, err.Error()))
			return
		}
		out := BashResult{Output: s.redact(res.Output), Cancelled: res.Cancelled, Truncated: res.Truncated, FullOutputPath: res.FullOutputPath}
		if res.ExitCode >= 0 {
			code := res.ExitCode
			out.ExitCode = &code
		}
		if !c.ExcludeFromContext {
			text := journal.BashText(c.Shell, out.Output, out.ExitCode, out.Cancelled, out.Truncated, out.FullOutputPath)
			sess.AddContext(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: llm.Now()})
		}
		s.respond(ok(c.ID, c.Type, out))
	}()
	return nil
}

func (s *server) redact(t string) string {
	if s.cfg.Redact == nil {
		return t
	}
	return s.cfg.Redact(t)
}

// exportHTML writes the session as one HTML page (htmlexport).
func (s *server) exportHTML(c Command, sess *session.Session) Response {
	st := s.state(sess)
	path := c.OutputPath
	if path == "" {
		path = filepath.Join(s.cfg.Dir, "rally-session-"+st.SessionID+".html")
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(s.cfg.Dir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	title := st.SessionName
	if title == "" {
		title = "Session " + st.SessionID
	}
	var b strings.Builder
	page := htmlexport.Page{Title: title, Model: st.Model.Provider + "/" + st.Model.ID, Messages: sess.Messages(), Redact: s.cfg.Redact}
	if err := htmlexport.Write(&b, page); err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fail(c.ID, c.Type, "export_html: "+err.Error())
	}
	return ok(c.ID, c.Type, PathResult{Path: path})
}

// replace serves the session of the file at path from now on (after the
// current run settled), answering with data.
func (s *server) replace(c Command, path string, data any) Response {
	if s.cfg.OpenSession == nil {
		return fail(c.ID, c.Type, c.Type+" is not available")
	}
	if _, err := os.Stat(path); err != nil {
		return fail(c.ID, c.Type, "no session file: "+path)
	}
	s.abort()
	if err := s.swapTo(func(ctx context.Context) (*session.Session, error) { return s.cfg.OpenSession(ctx, path) }); err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	return ok(c.ID, c.Type, data)
}

// fork starts a new session file holding the history before the user
// message entryID, serves it, and answers with that message's text so the
// client can offer it for editing, as pi's fork does.
func (s *server) fork(c Command, sess *session.Session) Response {
	file := sess.State().SessionFile
	if file == "" {
		return fail(c.ID, c.Type, "fork needs a saved session (this one runs with --no-session)")
	}
	ld, err := journal.Load(file)
	if err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	msgs, parent := forkPoints(ld)
	i := slices.IndexFunc(msgs, func(m ForkMessage) bool { return m.EntryID == c.EntryID })
	if i < 0 {
		return fail(c.ID, c.Type, "no user message with entry id "+c.EntryID+" (get_fork_messages lists them)")
	}
	return s.branch(c, file, parent[c.EntryID], ld.Cwd, ForkResult{Text: msgs[i].Text})
}

// branch writes a new session file (for cwd) from file's chain up to
// leaf and serves it.
func (s *server) branch(c Command, file, leaf, cwd string, data any) Response {
	if s.cfg.OpenSession == nil {
		return fail(c.ID, c.Type, c.Type+" is not available")
	}
	path, err := journal.Branch(file, leaf, cwd)
	if err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	return s.replace(c, path, data)
}

// forkPoints are the user messages of the loaded file's current chain
// (from its last entry along parentId), with each entry's parent id: what
// a fork from that message keeps.
func forkPoints(ld *journal.Loaded) (msgs []ForkMessage, parent map[string]string) {
	msgs, parent = []ForkMessage{}, make(map[string]string, len(ld.Entries))
	for _, e := range ld.Entries {
		parent[e.ID] = e.ParentID
	}
	onChain := map[string]bool{}
	if n := len(ld.Entries); n > 0 {
		for id := ld.Entries[n-1].ID; id != "" && !onChain[id]; id = parent[id] {
			onChain[id] = true
		}
	}
	for _, e := range ld.Entries {
		if e.Message != nil && e.Message.Role == llm.User && onChain[e.ID] {
			msgs = append(msgs, ForkMessage{EntryID: e.ID, Text: e.Message.TextOf()})
		}
	}
	return msgs, parent
}

func entries(c Command, file string) Response {
	res := EntriesResult{Entries: []json.RawMessage{}}
	if file == "" {
		if c.Since != "" {
			return fail(c.ID, c.Type, "no entry "+c.Since)
		}
		return ok(c.ID, c.Type, res)
	}
	es, err := journal.ReadEntries(file)
	if err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	from := 0
	if c.Since != "" {
		i := slices.IndexFunc(es, func(e journal.RawEntry) bool { return e.ID == c.Since })
		if i < 0 {
			return fail(c.ID, c.Type, "no entry "+c.Since)
		}
		from = i + 1
	}
	for _, e := range es[from:] {
		res.Entries = append(res.Entries, e.JSON)
	}
	if leaf := journal.Leaf(es); leaf != "" {
		res.LeafID = &leaf
	}
	return ok(c.ID, c.Type, res)
}

func tree(c Command, file string) Response {
	res := TreeResult{Tree: []*TreeNode{}}
	if file == "" {
		return ok(c.ID, c.Type, res)
	}
	es, err := journal.ReadEntries(file)
	if err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	nodes := make(map[string]*TreeNode, len(es))
	for _, e := range es {
		nodes[e.ID] = &TreeNode{Entry: e.JSON, Children: []*TreeNode{}}
	}
	for _, e := range es {
		n := nodes[e.ID]
		if p, ok := nodes[e.ParentID]; ok && e.ParentID != e.ID {
			p.Children = append(p.Children, n)
		} else {
			res.Tree = append(res.Tree, n) // a root, or an orphan
		}
	}
	if leaf := journal.Leaf(es); leaf != "" {
		res.LeafID = &leaf
	}
	return ok(c.ID, c.Type, res)
}
