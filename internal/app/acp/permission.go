package acp

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
)

// permissions asks the editor (session/request_permission) before the
// tools of tools.confirm run (tool.Confirm calls ask), as the terminal UI
// asks its user.
type permissions struct {
	conn    *sdk.AgentSideConnection
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

// ask reports whether the editor's user allowed the call. A cancelled
// prompt, a closed connection or an unknown answer is a no.
func (p *permissions) ask(ctx context.Context, name string, args json.RawMessage) (bool, error) {
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
		return false, err
	}
	return res.Outcome.Selected.OptionId == allowOnce, nil
}
