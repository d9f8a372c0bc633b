package rpc

import (
	"context"
	"encoding/json"
)

// The client's side of pi's commands beyond the retry core (pi.go).

// CycleModel moves to the next available model; nil when there is only
// one.
func (c *Client) CycleModel(ctx context.Context) (*CycleModelResult, error) {
	var raw json.RawMessage
	if err := c.call(ctx, Command{Type: CmdCycleModel}, &raw); err != nil || isNull(raw) {
		return nil, err
	}
	var r CycleModelResult
	return &r, json.Unmarshal(raw, &r)
}

// SetThinkingLevel sets the reasoning level of the next calls (a model
// that cannot reason stays at "off").
func (c *Client) SetThinkingLevel(ctx context.Context, level string) error {
	return c.call(ctx, Command{Type: CmdSetThinkingLevel, Level: level}, nil)
}

// CycleThinkingLevel moves to the next level of the model's and returns
// it; "" for a model that does not reason.
func (c *Client) CycleThinkingLevel(ctx context.Context) (string, error) {
	var raw json.RawMessage
	if err := c.call(ctx, Command{Type: CmdCycleThinkingLevel}, &raw); err != nil || isNull(raw) {
		return "", err
	}
	var r ThinkingLevelResult
	err := json.Unmarshal(raw, &r)
	return r.Level, err
}

// GetAvailableThinkingLevels lists the levels of the session's model.
func (c *Client) GetAvailableThinkingLevels(ctx context.Context) ([]string, error) {
	var r ThinkingLevelsResult
	err := c.call(ctx, Command{Type: CmdGetAvailableThinkingLevels}, &r)
	return r.Levels, err
}

// SetSteeringMode sets how steering messages are delivered: OneAtATime
// or AllAtOnce.
func (c *Client) SetSteeringMode(ctx context.Context, mode string) error {
	return c.call(ctx, Command{Type: CmdSetSteeringMode, Mode: mode}, nil)
}

// SetFollowUpMode sets how follow-up messages are delivered.
func (c *Client) SetFollowUpMode(ctx context.Context, mode string) error {
	return c.call(ctx, Command{Type: CmdSetFollowUpMode, Mode: mode}, nil)
}

// ClearQueue takes the queued steering and follow-up messages back.
func (c *Client) ClearQueue(ctx context.Context) (*QueueResult, error) {
	var r QueueResult
	if err := c.call(ctx, Command{Type: CmdClearQueue}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Bash runs a shell command of the user's; its output joins the context
// with the next prompt unless excludeFromContext.
func (c *Client) Bash(ctx context.Context, command string, excludeFromContext bool) (*BashResult, error) {
	var r BashResult
	if err := c.call(ctx, Command{Type: CmdBash, Shell: command, ExcludeFromContext: excludeFromContext}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// AbortBash stops the running Bash command.
func (c *Client) AbortBash(ctx context.Context) error {
	return c.call(ctx, Command{Type: CmdAbortBash}, nil)
}

// ExportHTML writes the session as one HTML page and returns its path;
// "" picks a name in the server's working directory.
func (c *Client) ExportHTML(ctx context.Context, path string) (string, error) {
	var r PathResult
	err := c.call(ctx, Command{Type: CmdExportHTML, OutputPath: path}, &r)
	return r.Path, err
}

// SwitchSession serves the session file at path from now on.
func (c *Client) SwitchSession(ctx context.Context, path string) error {
	return c.call(ctx, Command{Type: CmdSwitchSession, SessionPath: path}, nil)
}

// Fork starts a new session file with the history before the user
// message entryID and returns that message's text.
func (c *Client) Fork(ctx context.Context, entryID string) (string, error) {
	var r ForkResult
	err := c.call(ctx, Command{Type: CmdFork, EntryID: entryID}, &r)
	return r.Text, err
}

// Clone copies the session into a new session file and serves that.
func (c *Client) Clone(ctx context.Context) error {
	return c.call(ctx, Command{Type: CmdClone}, nil)
}

// GetForkMessages lists the user messages Fork can start from.
func (c *Client) GetForkMessages(ctx context.Context) ([]ForkMessage, error) {
	var r ForkMessagesResult
	err := c.call(ctx, Command{Type: CmdGetForkMessages}, &r)
	return r.Messages, err
}

// GetEntries returns the session file's entries after since ("" for all).
func (c *Client) GetEntries(ctx context.Context, since string) (*EntriesResult, error) {
	var r EntriesResult
	if err := c.call(ctx, Command{Type: CmdGetEntries, Since: since}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetTree returns the session file's entries as a tree.
func (c *Client) GetTree(ctx context.Context) (*TreeResult, error) {
	var r TreeResult
	if err := c.call(ctx, Command{Type: CmdGetTree}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetCommands lists the commands a prompt can run by name (none in
// rally; see CommandsResult).
func (c *Client) GetCommands(ctx context.Context) ([]SlashCommand, error) {
	var r CommandsResult
	err := c.call(ctx, Command{Type: CmdGetCommands}, &r)
	return r.Commands, err
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
