package rpc

import (
	"context"

	"github.com/rally-agent/rally/llm"
)

// PromptOptions are the extras of a prompt.
type PromptOptions struct {
	// Images are attached to the message (image content blocks: Data in
	// base64 and MimeType).
	Images []llm.Content
	// StreamingBehavior queues the prompt when a run is going: Steer or
	// FollowUp. Empty means the prompt is refused while a run is going.
	StreamingBehavior string
}

// Prompt sends a user message. It returns once the server has accepted
// it; the run's progress comes as events, and WaitSettled waits for its
// end.
func (c *Client) Prompt(ctx context.Context, message string, opts PromptOptions) error {
	return c.call(ctx, Command{Type: CmdPrompt, Message: message, Images: opts.Images, StreamingBehavior: opts.StreamingBehavior}, nil)
}

// Steer queues a message for the running prompt, delivered after the
// current tool call (the remaining calls are skipped).
func (c *Client) Steer(ctx context.Context, message string, images ...llm.Content) error {
	return c.call(ctx, Command{Type: CmdSteer, Message: message, Images: images}, nil)
}

// FollowUp queues a message delivered when the agent would stop.
func (c *Client) FollowUp(ctx context.Context, message string, images ...llm.Content) error {
	return c.call(ctx, Command{Type: CmdFollowUp, Message: message, Images: images}, nil)
}

// Abort stops the running prompt (and any retry wait) and returns when it
// has settled.
func (c *Client) Abort(ctx context.Context) error {
	return c.call(ctx, Command{Type: CmdAbort}, nil)
}

// NewSession aborts any run and starts a fresh session with the same
// settings. cancelled is always false with rally (pi's extensions can
// cancel).
func (c *Client) NewSession(ctx context.Context) (cancelled bool, err error) {
	var r NewSessionResult
	err = c.call(ctx, Command{Type: CmdNewSession}, &r)
	return r.Cancelled, err
}

// GetState returns the session's state, retry state included.
func (c *Client) GetState(ctx context.Context) (*State, error) {
	var st State
	if err := c.call(ctx, Command{Type: CmdGetState}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// GetMessages returns the session's working context.
func (c *Client) GetMessages(ctx context.Context) ([]llm.Message, error) {
	var r messagesResult
	err := c.call(ctx, Command{Type: CmdGetMessages}, &r)
	return r.Messages, err
}

// SetModel switches the model for the next model call and returns it.
func (c *Client) SetModel(ctx context.Context, provider, modelID string) (*llm.Model, error) {
	var m llm.Model
	if err := c.call(ctx, Command{Type: CmdSetModel, Provider: provider, ModelID: modelID}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// GetAvailableModels lists the models SetModel can pick.
func (c *Client) GetAvailableModels(ctx context.Context) ([]llm.Model, error) {
	var r modelsResult
	err := c.call(ctx, Command{Type: CmdGetAvailableModels}, &r)
	return r.Models, err
}

// CompactionResult is the data of compact, as in the reference protocol.
type CompactionResult struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	Details          any    `json:"details,omitempty"`
}

// Compact summarises the older part of the conversation now. It returns
// when the compaction is done.
func (c *Client) Compact(ctx context.Context) (*CompactionResult, error) {
	var r CompactionResult
	if err := c.call(ctx, Command{Type: CmdCompact}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SetAutoCompaction turns automatic compaction on or off.
func (c *Client) SetAutoCompaction(ctx context.Context, enabled bool) error {
	return c.call(ctx, Command{Type: CmdSetAutoCompaction, Enabled: &enabled}, nil)
}

// SetAutoRetry turns automatic retry on or off for this process.
func (c *Client) SetAutoRetry(ctx context.Context, enabled bool) error {
	return c.call(ctx, Command{Type: CmdSetAutoRetry, Enabled: &enabled}, nil)
}

// SetEventOptions chooses the form of message_update: partial false is
// the delta-only form (Start asks for it), true pi's, with the whole
// partial message. Events read either way carry their message (the client
// rebuilds it from the deltas).
func (c *Client) SetEventOptions(ctx context.Context, partial bool) error {
	return c.call(ctx, Command{Type: CmdSetEventOptions, Partial: &partial}, nil)
}

// AbortRetry cancels a pending retry wait and stops retrying; the chain's
// auto_retry_end (finalError "Retry cancelled") follows as an event.
func (c *Client) AbortRetry(ctx context.Context) error {
	return c.call(ctx, Command{Type: CmdAbortRetry}, nil)
}

// GetSessionStats returns message counts, token totals, cost and context
// usage.
func (c *Client) GetSessionStats(ctx context.Context) (*SessionStats, error) {
	var st SessionStats
	if err := c.call(ctx, Command{Type: CmdGetSessionStats}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// GetLastAssistantText returns the text of the latest assistant answer,
// or "" when there is none.
func (c *Client) GetLastAssistantText(ctx context.Context) (string, error) {
	var r textResult
	err := c.call(ctx, Command{Type: CmdGetLastAssistantText}, &r)
	if r.Text == nil {
		return "", err
	}
	return *r.Text, err
}

// SetSessionName names the session.
func (c *Client) SetSessionName(ctx context.Context, name string) error {
	return c.call(ctx, Command{Type: CmdSetSessionName, Name: name}, nil)
}
