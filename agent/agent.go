// Package agent is the agent loop: it streams an assistant message, runs
// the tools it calls, feeds back their results, and loops until the model
// stops. It never retries a model call and never persists anything: the
// session around it does both.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// DefaultMaxTurns is the most model calls one run makes when
// Config.MaxTurns is 0.
const DefaultMaxTurns = 50

// Config is what a run needs. The zero value is not useful: a Provider is
// required.
type Config struct {
	Provider llm.Provider
	Model    llm.Model
	System   string
	Tools    []tool.Tool
	// MaxTurns bounds the model calls of one run; 0 means DefaultMaxTurns.
	MaxTurns int
	Thinking string
	// Steering, if set, is asked after each tool execution for messages to
	// add before the next model call (interrupting the remaining tools).
	Steering func() []llm.Message
	// FollowUp, if set, is asked when the model stops, for messages that
	// start another turn.
	FollowUp func() []llm.Message
	// Pause, if set, is asked before every model call of a run but its
	// first, with the context that call would send; true ends the run
	// there (Outcome.Paused), so the caller can make room (compact) and
	// continue. The first call is never paused, so a run always advances.
	Pause func(convo []llm.Message) bool
	// Resume, if set, is asked about a stream that broke but that its
	// provider can continue (llm.Drop); true means it was reconnected and
	// the same message goes on. Nil fails such a stream like any other.
	Resume func(ctx context.Context, d *llm.Drop) bool
	// Waiting, if set, is called on the run's goroutine each time a
	// model's stream is about to wait for more of its response
	// (llm.Stream.OnWait): every event before it has been emitted, so a
	// consumer that batches per event can wait for it.
	Waiting func()
}

// ErrMaxTurns is returned when a run reaches Config.MaxTurns model calls.
var ErrMaxTurns = errors.New("agent: reached the maximum number of turns")

// Options are the per-run knobs.
type Options struct {
	// Attempt is sent to the provider as x-rally-attempt for the first
	// model call of the run (a retry's continuation sends 2, 3, …). 0
	// means 1.
	Attempt int
	// Prompt are new messages (normally one user message) that start the
	// run. They get message events after the first turn_start and are part
	// of the added messages. Empty means continue from msgs as they are.
	Prompt []llm.Message
}

// Outcome is how a run ended.
type Outcome struct {
	// Added are the messages the run added: assistant messages, tool
	// results, steering and follow-up messages.
	Added []llm.Message
	// CallErr is the error of the model call that ended the run, with its
	// type intact (*llm.APIError, a transport error, context.Canceled), or
	// nil when the last call succeeded. The last added message is then the
	// failed assistant message (stop reason error or aborted).
	CallErr error
	// Output reports that the failed call had streamed visible output
	// (text, thinking or a tool call) before it failed.
	Output bool
	// Paused reports that Config.Pause ended the run before a call.
	Paused bool
}

// Run continues the conversation msgs: it calls the model, runs tools and
// loops. emit receives every event in order, synchronously, on the
// caller's goroutine. err is non-nil only for a failure outside a model
// call: ErrMaxTurns, or the context ending between calls.
//
// A MessageUpdateEvent's Assistant is one event the loop reuses for every
// update of a call, and its Message is the stream's live message: both
// are valid only until emit returns, so a streamed delta costs no
// allocation here. Copy what you keep (the session snapshots them).
//
// Run takes msgs over rather than copying it (a long conversation would
// be copied for every run): it appends the run's messages to it, so the
// caller must not use msgs afterwards. Spare capacity saves reallocating.
func (c *Config) Run(ctx context.Context, msgs []llm.Message, opts Options, emit func(Event)) (out Outcome, err error) {
	maxTurns := c.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	specs := make([]llm.Tool, len(c.Tools))
	byName := make(map[string]tool.Tool, len(c.Tools))
	for i, t := range c.Tools {
		specs[i] = t.Spec()
		byName[specs[i].Name] = t
	}
	attempt := max(opts.Attempt, 1)
	emit(AgentStartEvent{})
	defer func() { emit(AgentEndEvent{Messages: out.Added}) }()

	convo := msgs
	for turn := 1; ; turn++ {
		if turn > maxTurns {
			return out, fmt.Errorf("%w (%d)", ErrMaxTurns, maxTurns)
		}
		if turn > 1 && c.Pause != nil && c.Pause(convo) {
			out.Paused = true
			return out, nil
		}
		emit(TurnStartEvent{})
		if turn == 1 {
			for i := range opts.Prompt {
				m := opts.Prompt[i]
				emit(MessageStartEvent{Message: &m})
				emit(MessageEndEvent{Message: &m})
				convo = append(convo, m)
				out.Added = append(out.Added, m)
			}
		}
		req := &llm.Request{Model: c.Model, System: c.System, Messages: convo, Tools: specs, Attempt: attempt, Thinking: c.Thinking}
		attempt = 1
		msg, callErr, output := c.call(ctx, req, emit)
		convo = append(convo, *msg)
		out.Added = append(out.Added, *msg)
		if callErr != nil {
			out.CallErr, out.Output = callErr, output
			emit(TurnEndEvent{Message: msg})
			return out, nil
		}
		results, steered := c.runTools(ctx, msg.ToolCalls(), byName, emit)
		convo = append(convo, results...)
		out.Added = append(out.Added, results...)
		emit(TurnEndEvent{Message: msg, ToolResults: results})
		if err := ctx.Err(); err != nil {
			return out, err
		}
		more := steered
		if len(more) == 0 && c.Steering != nil {
			// Steering sent while the model was streaming its last words.
			more = c.Steering()
		}
		if len(results) == 0 && len(more) == 0 && c.FollowUp != nil {
			more = c.FollowUp()
		}
		for _, m := range more {
			emit(MessageStartEvent{Message: &m})
			emit(MessageEndEvent{Message: &m})
		}
		convo = append(convo, more...)
		out.Added = append(out.Added, more...)
		if len(results) == 0 && len(more) == 0 {
			return out, nil
		}
	}
}

// call streams one assistant message. A failure to start the stream is
// folded into the message (stop reason error, or aborted), exactly like a
// failure mid-stream, so the caller has one place to look.
func (c *Config) call(ctx context.Context, req *llm.Request, emit func(Event)) (m *llm.Message, failure error, output bool) {
	s, err := c.Provider.Stream(ctx, req)
	if err != nil {
		m = &llm.Message{Role: llm.Assistant, API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
			Content: []llm.Content{}, StopReason: llm.Error, ErrorMessage: err.Error(), Timestamp: llm.Now()}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			m.StopReason = llm.Aborted
		}
		emit(MessageStartEvent{Message: m})
		emit(MessageEndEvent{Message: m})
		return m, err, false
	}
	defer s.Close()
	if c.Resume != nil {
		s.OnDrop(func(d *llm.Drop) bool { return c.Resume(ctx, d) })
	}
	if c.Waiting != nil {
		s.OnWait(c.Waiting)
	}
	// One update event for the whole call, boxed once: each delta
	// overwrites cur (see Run on what emit may keep).
	var cur llm.Event
	var update Event
	for {
		e, err := s.Next()
		if err == io.EOF {
			break
		}
		switch e.Type {
		case llm.EventStart:
			emit(MessageStartEvent{Message: e.Partial})
		case llm.EventDone:
		case llm.EventError:
			failure = e.Err
		default:
			if e.Type != llm.EventTextStart && e.Type != llm.EventThinkingStart {
				output = true
			}
			if u, ok := update.(MessageUpdateEvent); !ok || u.Message != e.Partial {
				update = MessageUpdateEvent{Message: e.Partial, Assistant: &cur}
			}
			cur = e
			emit(update)
		}
	}
	m = s.Message()
	if failure != nil && m.StopReason != llm.Aborted && ctx.Err() != nil {
		// The stream failed because the run was aborted.
		m.StopReason = llm.Aborted
	}
	emit(MessageEndEvent{Message: m})
	return m, failure, output
}

// runTools executes the calls one after another. Steering messages that
// arrive skip the remaining calls (each gets a "skipped" result) so the
// model sees the user's interruption next.
func (c *Config) runTools(ctx context.Context, calls []llm.Content, byName map[string]tool.Tool, emit func(Event)) (results, steered []llm.Message) {
	for _, call := range calls {
		if ctx.Err() != nil || len(steered) > 0 {
			why := "Skipped: the run was aborted."
			if len(steered) > 0 {
				why = "Skipped: the user sent a new message."
			}
			results = append(results, c.result(call, tool.Result{Content: []llm.Content{llm.Text(why)}, IsError: true}, emit))
			continue
		}
		emit(ToolExecutionStartEvent{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
		res := execute(ctx, byName[call.Name], call)
		emit(ToolExecutionEndEvent{ToolCallID: call.ID, ToolName: call.Name, Result: &res, IsError: res.IsError})
		results = append(results, c.result(call, res, emit))
		if c.Steering != nil {
			steered = c.Steering()
		}
	}
	return results, steered
}

func (c *Config) result(call llm.Content, res tool.Result, emit func(Event)) llm.Message {
	content := res.Content
	if content == nil {
		content = []llm.Content{}
	}
	m := llm.Message{Role: llm.ToolResult, ToolCallID: call.ID, ToolName: call.Name, Content: content, IsError: res.IsError, Timestamp: llm.Now()}
	emit(MessageStartEvent{Message: &m})
	emit(MessageEndEvent{Message: &m})
	return m
}

// execute runs one tool; an unknown tool, an error or a panic becomes an
// error result for the model to read, never a crash.
func execute(ctx context.Context, t tool.Tool, call llm.Content) (res tool.Result) {
	if t == nil {
		return tool.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("unknown tool %q", call.Name))}, IsError: true}
	}
	defer func() {
		if p := recover(); p != nil {
			res = tool.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s: internal error: %v", call.Name, p))}, IsError: true}
		}
	}()
	args, err := checkArgs(call)
	if err != nil {
		return tool.Result{Content: []llm.Content{llm.Text(err.Error())}, IsError: true}
	}
	res, err = t.Run(ctx, args)
	if err != nil {
		return tool.Result{Content: []llm.Content{llm.Text(err.Error())}, IsError: true}
	}
	return res
}

// checkArgs returns the arguments to run call with, or the error the model
// reads instead when they are not a JSON object: the provider streamed
// text that did not parse (llm keeps it as a JSON string) or a session
// holds something else. Such a call is never run, not even with {}: a
// guess could run another command than the one the model meant.
func checkArgs(call llm.Content) (json.RawMessage, error) {
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	if args[0] == '{' {
		return call.Arguments, nil
	}
	var text string
	if args[0] == '"' && json.Unmarshal(args, &text) == nil {
		args = []byte(text)
	}
	if err := tool.CheckArgs(call.Name, args); err != nil {
		return nil, fmt.Errorf("%w; the call was not run: send it again with its arguments as one JSON object", err)
	}
	return args, nil
}
