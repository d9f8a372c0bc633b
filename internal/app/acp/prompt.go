package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Prompt runs one prompt and streams its events to the editor. It answers
// when the prompt has settled: end_turn, cancelled after session/cancel, or
// an error carrying rally's final message.
func (a *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.get(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, images := promptContent(p.Prompt)
	s.mu.Lock()
	s.cancelled = false
	s.mu.Unlock()
	if !s.afterResumed(ctx) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}

	t := &turn{a: a, s: s, tools: map[string]*toolView{}}
	sub := s.sess.Watch(t.event)
	defer sub.Close()
	s.perm.sync = func(ctx context.Context) { sub.Sync(ctx) }
	s.perm.turn = t
	// The run outlives the request's context (which ends when the client
	// goes away, and then Serve aborts everything); session/cancel is how
	// the editor stops it.
	run, err := s.sess.Start(context.WithoutCancel(ctx), text, session.PromptOptions{Images: images})
	if err != nil {
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
	}
	runErr := run.Wait()
	sub.Sync(ctx) // every update of the run is out before the answer
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	switch {
	case cancelled || errors.Is(runErr, context.Canceled):
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case errors.Is(runErr, agent.ErrMaxTurns):
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	case runErr != nil:
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: runErr.Error()}
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// promptContent turns ACP's content blocks into the prompt's text and
// images. Resources the editor embeds (a file it attached) are quoted
// into the text with their URI; links are named, for the model to read
// with its tools.
func promptContent(blocks []sdk.ContentBlock) (string, []llm.Content) {
	var sb strings.Builder
	var images []llm.Content
	add := func(s string) {
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(s)
	}
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			add(b.Text.Text)
		case b.Image != nil:
			images = append(images, llm.Content{Type: llm.ImageType, Data: b.Image.Data, MimeType: b.Image.MimeType})
		case b.ResourceLink != nil:
			add(fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			add(fmt.Sprintf("Contents of %s:\n```\n%s\n```", r.Uri, r.Text))
		}
	}
	return sb.String(), images
}

// send delivers one update, logging (not failing on) a closed connection:
// the run goes on and is aborted when Serve ends.
func (a *server) send(id sdk.SessionId, u sdk.SessionUpdate) {
	if err := a.peer().SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
		a.log.Debug("acp: session/update", "err", err)
	}
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// modes are the thinking levels of the session's model, offered as ACP
// session modes as pi-acp offers pi's ("Thinking: high"); nil for a model
// that does not reason.
func modes(sess *session.Session) *sdk.SessionModeState {
	st := sess.State()
	levels := llm.ThinkingLevels(st.Model)
	if len(levels) < 2 {
		return nil
	}
	cur := st.Thinking
	if cur == "" {
		cur = llm.ThinkingOff
	}
	out := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(cur)}
	for _, l := range levels {
		out.AvailableModes = append(out.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(l), Name: "Thinking: " + l})
	}
	return out
}

// SetSessionMode sets the thinking level (the modes of modes).
func (a *server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.get(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	level := string(p.ModeId)
	ok := false
	for _, l := range llm.ThinkingLevels(s.sess.State().Model) {
		ok = ok || l == level
	}
	if !ok {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"message": "unknown mode " + level})
	}
	s.sess.SetThinking(level)
	a.send(s.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}})
	return sdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption is not offered: rally's session modes are the
// thinking levels, and the model is chosen with --model in the editor's
// agent settings.
func (a *server) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}
