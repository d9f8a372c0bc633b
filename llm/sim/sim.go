// Package sim is rally's embedded default model: offline, deterministic, and
// needing no key. It streams a plausible answer word by word with realistic
// usage numbers, and calls the built-in tools when a prompt clearly asks
// for them ("read README.md", "run ls"), so the whole agent loop can be
// shown without a provider. A tiny context window makes it report a
// context overflow the way a real provider does, so compaction can be shown
// offline too.
package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
)

// DefaultDelay is the pause between streamed words when Model.Delay is 0:
// fast, but slow enough to see the answer stream.
const DefaultDelay = 12 * time.Millisecond

// Model is the sim provider. The zero value streams at DefaultDelay.
type Model struct {
	// Delay is the pause between words; negative means none (tests).
	Delay time.Duration
}

// API defines the sim for the registry: no server, no options.
var API = llm.APIDef{Name: llm.APISim, Doc: "rally's offline model", New: func(llm.ClientOptions) llm.Provider { return &Model{} }}

// Info is the catalog entry of the sim model.
func Info() llm.Model {
	m, _ := llm.Lookup("sim", "sim")
	return m
}

// Stream answers the conversation in req.
func (s *Model) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	input := estimate(req)
	if w := req.Model.ContextWindow; w > 0 && input > w {
		msg := fmt.Sprintf("prompt is too long: %d tokens > %d maximum", input, w)
		return nil, &llm.APIError{Provider: "sim", StatusCode: 400, Type: "invalid_request_error", Message: msg,
			Body: fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, msg)}
	}
	plan := respond(req)
	delay := s.Delay
	if delay == 0 {
		delay = DefaultDelay
	}
	msg := llm.Message{Role: llm.Assistant, API: llm.APISim, Provider: "sim", Model: req.Model.ID, Timestamp: llm.Now()}
	if msg.Model == "" {
		msg.Model = "sim"
	}
	words := splitWords(plan.text)
	i := 0
	var timer *time.Timer
	fill := func(b *llm.Builder) error {
		if i > 0 && delay > 0 {
			if timer == nil {
				timer = time.NewTimer(delay)
			} else {
				timer.Reset(delay)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case i < len(words):
			b.Text("0", words[i])
		case i == len(words):
			for k, c := range plan.calls {
				b.ToolCall(llm.Key(k+1), c.ID, c.Name, string(c.Arguments))
			}
			u := llm.Usage{Input: input, Output: max(1, len(plan.text)/4+len(plan.calls)*12)}
			req.Model.Price(&u)
			b.Usage(u)
			b.Finish(llm.Stop)
		default:
			return io.EOF
		}
		i++
		return nil
	}
	stop := func() error {
		if timer != nil {
			timer.Stop()
		}
		return nil
	}
	return llm.NewStream(msg, fill, stop), nil
}

// estimate counts input tokens the usual rough way: four characters a token.
func estimate(req *llm.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		for _, c := range m.Content {
			n += len(c.Text) + len(c.Thinking) + len(c.Arguments) + len(c.Name)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return max(1, n/4)
}

// splitWords splits text into streaming pieces: each word with the space
// that follows it.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type plan struct {
	text  string
	calls []llm.Content
}

// respond decides the answer: a summary when asked for one, the next tool
// call of the request, a report on the last tool result, or a few
// sentences about the prompt.
func respond(req *llm.Request) plan {
	if len(req.Messages) == 0 {
		return plan{text: "Hello! I am rally's offline sim model. Ask me anything."}
	}
	if strings.Contains(strings.ToLower(req.System), "summarise") {
		return plan{text: summarize(req.Messages[len(req.Messages)-1].TextOf())}
	}
	goal, done := progress(req.Messages)
	if c, ok := nextTool(goal, done, req.Tools, len(req.Messages)); ok {
		text := "Let me do that."
		if len(done) > 0 {
			text = "Next step."
		}
		return plan{text: text, calls: []llm.Content{c}}
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == llm.ToolResult {
		return plan{text: report(last, len(done))}
	}
	return plan{text: answer(goal)}
}

// summaryMark starts a user message that stands for a compacted history.
const summaryMark = "The conversation history before this point was compacted"

// progress finds the request being worked on (the last user message, or
// the goal kept in a compaction summary) and the tool calls made for it
// (in the context, and listed under "## Done" in a summary).
func progress(msgs []llm.Message) (goal string, done []string) {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.User {
			start = i
			break
		}
	}
	goal = strings.TrimSpace(msgs[start].TextOf())
	if strings.HasPrefix(goal, summaryMark) {
		done = section(goal, "## Done")
		if g := section(goal, "## Goal"); len(g) > 0 {
			goal = g[0]
		}
	}
	for _, m := range msgs[start:] {
		for _, c := range m.ToolCalls() {
			done = append(done, c.Name+": "+argOf(c))
		}
	}
	return goal, done
}

// section returns the non-empty lines under a Markdown heading, without
// list markers.
func section(text, heading string) []string {
	i := strings.Index(text, heading+"\n")
	if i < 0 {
		return nil
	}
	var out []string
	for _, line := range strings.Split(text[i+len(heading)+1:], "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "</summary>") {
			break
		}
		if line = strings.TrimPrefix(line, "- "); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func argOf(c llm.Content) string {
	var v map[string]any
	json.Unmarshal(c.Arguments, &v)
	for _, k := range []string{"command", "path"} {
		if s, ok := v[k].(string); ok {
			return s
		}
	}
	return string(c.Arguments)
}

// summarize writes the structured summary compaction asks for, from the
// transcript it is given ("[user]: …", "[assistant calls bash]: {…}").
func summarize(transcript string) string {
	goal := ""
	var done []string
	for _, line := range strings.Split(transcript, "\n") {
		switch {
		case strings.HasPrefix(line, "[user]: ") && goal == "":
			goal = strings.TrimPrefix(line, "[user]: ")
			if strings.HasPrefix(goal, summaryMark) {
				// An earlier summary: carry its goal and its done list.
				rest := transcript[strings.Index(transcript, line):]
				if g := section(rest, "## Goal"); len(g) > 0 {
					goal = g[0]
				}
				done = append(done, section(rest, "## Done")...)
			}
		case strings.HasPrefix(line, "[assistant calls "):
			name, args, _ := strings.Cut(strings.TrimPrefix(line, "[assistant calls "), "]: ")
			done = append(done, name+": "+argOf(llm.Content{Arguments: json.RawMessage(args)}))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Goal\n%s\n\n## Decisions\nNone recorded.\n\n## Files touched\nNone.\n\n## Done\n", goal)
	for _, d := range done {
		fmt.Fprintf(&b, "- %s\n", d)
	}
	if len(done) == 0 {
		b.WriteString("Nothing yet.\n")
	}
	b.WriteString("\n## Open tasks\nContinue with the goal from where the Done list ends.")
	return b.String()
}

func has(tools []llm.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// nextTool recognises "read FILE", "show me FILE", "run CMD", "execute
// CMD", and chains such as "run A then B then C": it returns the first step
// not yet in done.
func nextTool(prompt string, done []string, tools []llm.Tool, n int) (llm.Content, bool) {
	lower := strings.ToLower(prompt)
	args := func(v map[string]string) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	id := fmt.Sprintf("call_sim_%d", n)
	for _, verb := range []string{"read ", "show me ", "open ", "cat "} {
		if i := strings.Index(lower, verb); i >= 0 && has(tools, "read") && len(done) == 0 {
			path := firstWord(prompt[i+len(verb):])
			if path != "" && (strings.Contains(path, ".") || strings.Contains(path, "/")) {
				return llm.Content{Type: llm.ToolCallType, ID: id, Name: "read", Arguments: args(map[string]string{"path": path})}, true
			}
		}
	}
	for _, verb := range []string{"run ", "execute "} {
		i := strings.Index(lower, verb)
		if i < 0 || !has(tools, "bash") {
			continue
		}
		var steps []string
		for _, part := range strings.Split(prompt[i+len(verb):], " then ") {
			cmd := strings.TrimRight(strings.Trim(strings.TrimSpace(part), "`'\""), ".!?")
			if cmd != "" {
				steps = append(steps, cmd)
			}
		}
		if len(done) < len(steps) {
			return llm.Content{Type: llm.ToolCallType, ID: id, Name: "bash", Arguments: args(map[string]string{"command": steps[len(done)]})}, true
		}
	}
	return llm.Content{}, false
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, "`'\".,!?")
}

func report(m llm.Message, steps int) string {
	var text strings.Builder
	for _, c := range m.Content {
		text.WriteString(c.Text)
	}
	out := strings.TrimSpace(text.String())
	lines := strings.Count(out, "\n") + 1
	if out == "" {
		lines = 0
	}
	first := out
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if len(first) > 120 {
		first = first[:120] + "…"
	}
	if m.IsError {
		return fmt.Sprintf("The %s tool failed: %s. I cannot go further without it.", m.ToolName, first)
	}
	if lines == 0 {
		return fmt.Sprintf("The %s tool finished and printed nothing.", m.ToolName)
	}
	if steps > 1 {
		return fmt.Sprintf("Done: %d steps. The last one returned %d line(s); the first reads %q.", steps, lines, first)
	}
	return fmt.Sprintf("The %s tool returned %d line(s). The first one reads: %q. That is what you asked for.", m.ToolName, lines, first)
}

// answers are the sim's sentences. One is picked by a hash of the prompt,
// so the same prompt always gets the same answer.
var answers = []string{
	"Here is a short answer. In a real session a provider's model would reason about it; I am the offline sim model, so I restate the question and keep the loop going. Try \"read README.md\" or \"run ls\" to see tool calls.",
	"Good question. I am rally's built-in sim model: I work offline and need no key, so the whole agent loop, its retries and its session file can be shown anywhere. Configure a provider to get a real answer.",
	"Let me answer briefly. The sim model streams this reply word by word with realistic usage numbers, so you can watch rally's streaming, retry notices and persistence without a network.",
}

// Answer is the sim model's answer to a prompt that asks for no tool.
func Answer(prompt string) string { return answer(prompt) }

func answer(prompt string) string {
	lower := strings.ToLower(prompt)
	if strings.Contains(lower, "rally") {
		return "rally runs LLM agent sessions whose turns survive provider failures. When a provider is overloaded, rate limited or drops the stream, rally waits and retries the turn by itself, visibly and cancellably, without losing or repeating output. Failures that time cannot fix, like a bad key, fail at once with a clear message."
	}
	h := fnv.New32a()
	h.Write([]byte(prompt))
	q := prompt
	if len(q) > 100 {
		q = q[:100] + "…"
	}
	if q == "" {
		return answers[0]
	}
	return fmt.Sprintf("You asked: %q. %s", q, answers[int(h.Sum32())%len(answers)])
}
