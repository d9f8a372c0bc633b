package tui

import (
	"context"
	"encoding/json"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// Confirmer asks the user y/n before the tools named in tools.confirm run.
// Build it before the session, give the session the tools from Wrap, and
// pass it to Run, which connects it to the screen.
type Confirmer struct {
	names map[string]bool
	link  // delivers a confirmMsg to the UI
}

// NewConfirmer returns a Confirmer for the named tools.
func NewConfirmer(names []string) *Confirmer {
	c := &Confirmer{names: map[string]bool{}}
	for _, n := range names {
		c.names[n] = true
	}
	return c
}

// Wrap returns ts with the listed tools asking first.
func (c *Confirmer) Wrap(ts []tool.Tool) []tool.Tool {
	if c == nil || len(c.names) == 0 {
		return ts
	}
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
		if c.names[t.Spec().Name] {
			out[i] = confirming{t: t, c: c}
		}
	}
	return out
}

// ask blocks until the user answers or ctx ends; with no UI connected
// the answer is no.
func (c *Confirmer) ask(ctx context.Context, name, args string) bool {
	send := c.sender()
	if send == nil {
		return false
	}
	reply := make(chan bool, 1)
	send(confirmMsg{name: name, args: args, reply: reply})
	select {
	case yes := <-reply:
		return yes
	case <-ctx.Done():
		return false
	}
}

type confirming struct {
	t tool.Tool
	c *Confirmer
}

func (w confirming) Spec() llm.Tool { return w.t.Spec() }

func (w confirming) Run(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	name := w.t.Spec().Name
	if !w.c.ask(ctx, name, string(args)) {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		// A tool result the model can read and act on.
		return tool.Result{Content: []llm.Content{llm.Text("The user declined to run " + name + " with these arguments. Ask them or try something else.")}, IsError: true}, nil
	}
	return w.t.Run(ctx, args)
}
