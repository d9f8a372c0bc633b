package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/session"
)

func reasoningSession(t *testing.T) *session.Session {
	t.Helper()
	m := sim.Info()
	m.Reasoning = true
	s, err := session.New(session.Config{Provider: &sim.Model{}, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestThinkingLevels(t *testing.T) {
	ctx := context.Background()
	t.Run("a model that reasons", func(t *testing.T) {
		c := serveInProcess(t, Config{Session: reasoningSession(t)})
		levels, err := c.GetAvailableThinkingLevels(ctx)
		if err != nil || strings.Join(levels, ",") != "off,minimal,low,medium,high" {
			t.Fatalf("levels %v, %v", levels, err)
		}
		if err := c.SetThinkingLevel(ctx, "high"); err != nil {
			t.Fatal(err)
		}
		if st, _ := c.GetState(ctx); st.ThinkingLevel != "high" {
			t.Fatalf("thinkingLevel %q after set_thinking_level high", st.ThinkingLevel)
		}
		// The cycle wraps from the last level to the first.
		if l, err := c.CycleThinkingLevel(ctx); err != nil || l != "off" {
			t.Fatalf("cycle from high: %q, %v", l, err)
		}
		if l, _ := c.CycleThinkingLevel(ctx); l != "minimal" {
			t.Fatalf("cycle from off: %q", l)
		}
		var e *Error
		if err := c.SetThinkingLevel(ctx, "extreme"); !errors.As(err, &e) || !strings.Contains(e.Message, "unknown thinking level") {
			t.Fatalf("an unknown level: %v", err)
		}
	})
	t.Run("a model that does not", func(t *testing.T) {
		c := serveInProcess(t, Config{Session: simSession(t, 0)})
		levels, _ := c.GetAvailableThinkingLevels(ctx)
		if strings.Join(levels, ",") != "off" {
			t.Fatalf("levels %v", levels)
		}
		c.SetThinkingLevel(ctx, "high")
		if st, _ := c.GetState(ctx); st.ThinkingLevel != "off" {
			t.Fatalf("thinkingLevel %q: a level the model cannot take stays off", st.ThinkingLevel)
		}
		if l, err := c.CycleThinkingLevel(ctx); err != nil || l != "" {
			t.Fatalf("cycle without reasoning: %q, %v (want null data)", l, err)
		}
	})
}

// gated is a provider whose calls wait until the test opens the gate, so
// that messages are queued while a run is certainly going.
type gated struct {
	llm.Provider
	gate chan struct{}
}

func (g gated) Stream(ctx context.Context, r *llm.Request) (*llm.Stream, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Provider.Stream(ctx, r)
}

// TestQueueModes: follow-ups queued during a run are delivered one per
// agent stop by default, and together in "all" mode; clear_queue takes
// them back.
func TestQueueModes(t *testing.T) {
	for _, tt := range []struct {
		mode  string
		roles string // of the context after the run
	}{
		{OneAtATime, "user assistant user assistant user assistant"},
		{AllAtOnce, "user assistant user user assistant"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			ctx := context.Background()
			gate := make(chan struct{})
			s, err := session.New(session.Config{Provider: gated{&sim.Model{}, gate}, Model: sim.Info()})
			if err != nil {
				t.Fatal(err)
			}
			c := serveInProcess(t, Config{Session: s})
			if err := c.SetFollowUpMode(ctx, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := c.Prompt(ctx, "first", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			c.FollowUp(ctx, "second")
			c.FollowUp(ctx, "third")
			if st, _ := c.GetState(ctx); st.PendingMessageCount != 2 || st.FollowUpMode != tt.mode {
				t.Fatalf("state while queued: %+v", st)
			}
			close(gate)
			if err := c.WaitSettled(ctx); err != nil {
				t.Fatal(err)
			}
			ms, _ := c.GetMessages(ctx)
			var roles []string
			for _, m := range ms {
				roles = append(roles, string(m.Role))
			}
			if got := strings.Join(roles, " "); got != tt.roles {
				t.Fatalf("context %q, want %q", got, tt.roles)
			}
		})
	}
	t.Run("clear_queue", func(t *testing.T) {
		ctx := context.Background()
		gate := make(chan struct{})
		s, _ := session.New(session.Config{Provider: gated{&sim.Model{}, gate}, Model: sim.Info()})
		c := serveInProcess(t, Config{Session: s})
		c.Prompt(ctx, "first", PromptOptions{})
		c.Steer(ctx, "turn left")
		c.FollowUp(ctx, "and then")
		q, err := c.ClearQueue(ctx)
		if err != nil || strings.Join(q.Steering, "|") != "turn left" || strings.Join(q.FollowUp, "|") != "and then" {
			t.Fatalf("clear_queue: %+v, %v", q, err)
		}
		close(gate)
		c.WaitSettled(ctx)
		if ms, _ := c.GetMessages(ctx); len(ms) != 2 {
			t.Fatalf("%d messages: a cleared message was delivered", len(ms))
		}
	})
}

func TestDecodePiCommands(t *testing.T) {
	for _, tt := range []struct{ line, errHas string }{
		{`{"type":"set_thinking_level"}`, `missing field "level"`},
		{`{"type":"set_thinking_level","level":3}`, `field "level" must be a string`},
		{`{"type":"set_steering_mode"}`, `missing field "mode"`},
		{`{"type":"set_follow_up_mode","mode":null}`, `missing field "mode"`},
		{`{"type":"bash"}`, `missing field "command"`},
		{`{"type":"bash","command":"ls","excludeFromContext":"yes"}`, `field "excludeFromContext" must be a boolean`},
		{`{"type":"switch_session"}`, `missing field "sessionPath"`},
		{`{"type":"fork","entryId":[]}`, `field "entryId" must be a string`},
		{`{"type":"get_entries","since":1}`, `field "since" must be a string`},
		{`{"type":"extension_ui_response","id":"x","confirmed":"yes"}`, `field "confirmed" must be a boolean`},
	} {
		t.Run(tt.line, func(t *testing.T) {
			_, err := DecodeCommand([]byte(tt.line))
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(de.Msg, tt.errHas) {
				t.Fatalf("got %v, want an error with %q", err, tt.errHas)
			}
		})
	}
	c, err := DecodeCommand([]byte(`{"id":"d1","type":"extension_ui_response","confirmed":true,"value":"v"}`))
	if err != nil || c.ID != "d1" || c.Confirmed == nil || !*c.Confirmed || c.Value != "v" {
		t.Fatalf("extension_ui_response: %+v, %v", c, err)
	}
}

// TestDialogs: a question goes out as pi's extension_ui_request and the
// client's extension_ui_response answers it (and gets no response line).
func TestDialogs(t *testing.T) {
	for _, tt := range []struct {
		answer string
		want   bool
	}{
		{`"confirmed":true`, true},
		{`"confirmed":false`, false},
		{`"cancelled":true`, false},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			d := NewDialogs()
			if yes, err := d.Confirm(context.Background(), "t", "m"); yes || !errors.Is(err, ErrNoClient) {
				t.Fatalf("before Serve: %v, %v", yes, err)
			}
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Serve(context.Background(), sr, sw, Config{Session: simSession(t, 0), Dialogs: d})
				sw.Close()
			}()
			defer func() { cw.Close(); <-done }()
			lines := bufio.NewScanner(cr)
			// One round trip first: Serve has attached d once it answers.
			io.WriteString(cw, `{"id":"s0","type":"get_state"}`+"\n")
			if !lines.Scan() || !strings.Contains(lines.Text(), `"id":"s0"`) {
				t.Fatalf("first line %q", lines.Text())
			}
			got := make(chan bool, 1)
			go func() {
				yes, _ := d.Confirm(context.Background(), "Allow bash?", "bash ls")
				got <- yes
			}()
			if !lines.Scan() {
				t.Fatal("no request line")
			}
			var req struct{ Type, ID, Method, Title, Message string }
			if err := json.Unmarshal(lines.Bytes(), &req); err != nil || req.Type != "extension_ui_request" || req.Method != "confirm" || req.Title != "Allow bash?" || req.ID == "" {
				t.Fatalf("request %s: %v", lines.Bytes(), err)
			}
			io.WriteString(cw, `{"type":"extension_ui_response","id":"`+req.ID+`",`+tt.answer+"}\n")
			select {
			case yes := <-got:
				if yes != tt.want {
					t.Fatalf("answer %v, want %v", yes, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the answer never reached Confirm")
			}
			// The next line answers the next command: nothing answered the
			// extension_ui_response itself.
			io.WriteString(cw, `{"id":"s","type":"get_state"}`+"\n")
			lines.Scan()
			if !strings.Contains(lines.Text(), `"id":"s"`) {
				t.Fatalf("line after the dialog: %s", lines.Text())
			}
		})
	}
}
