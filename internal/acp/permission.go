package acp

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// permissions asks the editor (session/request_permission) before the
// tools of tools.confirm run, as the terminal UI asks its user.
type permissions struct {
	conn    *sdk.AgentSideConnection
	names   map[string]bool
	session *acpSession
	// sync waits until the prompt's events so far reached the turn, so the
	// tool call being asked about has been announced; turn then knows its
	// id. Both are set by Prompt before the run starts.
	sync func(context.Context)
	turn *turn
}

// Permission option ids.
const (
	allowOnce  = "allow"
	rejectOnce = "reject"
)

func (p *permissions) wrap(ts []tool.Tool) []tool.Tool {
	if len(p.names) == 0 {
		return ts
	}
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
		if p.names[t.Spec().Name] {
			out[i] = asking{t: t, p: p}
		}
	}
	return out
}

// ask reports whether the editor's user allowed the call. A cancelled
// prompt, a closed connection or an unknown answer is a no.
func (p *permissions) ask(ctx context.Context, name string, args json.RawMessage) bool {
	id := ""
	if p.sync != nil {
		p.sync(ctx)
		p.turn.mu.Lock()
		for callID, v := range p.turn.tools {
			if v.name == name && string(v.args) == string(args) {
				id = callID
			}
		}
		p.turn.mu.Unlock()
	}
	if id == "" {
		id = "confirm-" + newID()
	}
	a := parseArgs(args)
	k := kind(name)
	t := title(name, a)
	res, err := p.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: p.session.id,
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Title: &t, Kind: &k, RawInput: args},
		Options: []sdk.PermissionOption{
			{OptionId: allowOnce, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: rejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil || res.Outcome.Selected == nil {
		return false
	}
	return res.Outcome.Selected.OptionId == allowOnce
}

type asking struct {
	t tool.Tool
	p *permissions
}

func (w asking) Spec() llm.Tool { return w.t.Spec() }

func (w asking) Run(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	name := w.t.Spec().Name
	if !w.p.ask(ctx, name, args) {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		return tool.Result{Content: []llm.Content{llm.Text("The user declined to run " + name + " with these arguments. Ask them or try something else.")}, IsError: true}, nil
	}
	return w.t.Run(ctx, args)
}
