package tui

import (
	"context"
	"encoding/json"

	"github.com/rally-agent/rally/tool"
)

// Confirmer asks the user y/n before the tools named in tools.confirm run.
// Build it before the session, give the session the tools from Wrap, and
// pass it to Run, which connects it to the screen.
type Confirmer struct {
	names []string
	link  // delivers a confirmMsg to the UI
}

// NewConfirmer returns a Confirmer for the named tools.
func NewConfirmer(names []string) *Confirmer { return &Confirmer{names: names} }

// Wrap returns ts with the listed tools asking first (tool.Confirm, the
// wrapper RPC and ACP use too: a declined call is a result the model reads).
func (c *Confirmer) Wrap(ts []tool.Tool) []tool.Tool {
	if c == nil {
		return ts
	}
	return tool.Confirm(ts, c.names, c.ask)
}

// ask blocks until the user answers or ctx ends; with no UI connected
// the answer is no.
func (c *Confirmer) ask(ctx context.Context, name string, args json.RawMessage) (bool, error) {
	send := c.sender()
	if send == nil {
		return false, nil
	}
	reply := make(chan bool, 1)
	send(confirmMsg{name: name, args: string(args), reply: reply})
	select {
	case yes := <-reply:
		return yes, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
