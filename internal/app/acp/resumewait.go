package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/session/journal"
)

// Interrupted is a wait for a usage limit's reset that a loaded session's
// file was stopped in (a rally stopped during it), as the program found it.
type Interrupted struct {
	Wait journal.Wait
	// Resume waits out what is left of it and then continues the
	// interrupted prompt (retry.waitForReset or --wait-for-reset is on);
	// otherwise the editor is only told.
	Resume bool
	// Note is the line the editor shows about it either way, e.g. "a
	// usage-limit wait until 15:00 was interrupted; resuming it".
	Note string
}

// interrupted tells the editor about the loaded session's interrupted
// wait, if any, and resumes it when Config.Interrupted says so. The
// resumed run has no session/prompt of its own: its updates (the retry
// line, then the continued answer) arrive as those of a prompt would, a
// session/prompt sent meanwhile waits for it, and session/cancel ends the
// wait at once.
func (a *server) interrupted(ctx context.Context, s *acpSession) {
	if a.cfg.Interrupted == nil {
		return
	}
	in := a.cfg.Interrupted(s.sess)
	if in == nil {
		return
	}
	u := sdk.UpdateAgentMessageText("\n" + in.Note + "\n")
	u.AgentMessageChunk.Meta = map[string]any{"rally": map[string]any{"interruptedWait": map[string]any{
		"untilMs": in.Wait.Until.UnixMilli(), "resumed": in.Resume}}}
	a.send(s.id, u)
	if !in.Resume {
		return
	}
	t := &turn{a: a, s: s, tools: map[string]*toolView{}}
	sub := s.sess.Watch(t.event)
	s.perm.sync = func(ctx context.Context) { sub.Sync(ctx) }
	s.perm.turn = t
	// As a prompt's run, it outlives the request; session/cancel stops it.
	run, err := s.sess.StartResumeWait(context.WithoutCancel(ctx), in.Wait)
	if err != nil {
		sub.Close()
		a.log.Warn("acp: resuming the interrupted wait failed", "session", string(s.id), "err", err)
		return
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.resumed = done
	s.mu.Unlock()
	go func() {
		defer close(done)
		if err := run.Wait(); err != nil {
			a.log.Info("acp: the resumed wait ended", "session", string(s.id), "err", err)
		}
		sub.Sync(context.Background())
		sub.Close()
	}()
}

// afterResumed waits until the run resuming an interrupted wait, if one
// runs, has settled: a prompt goes on after it, as print mode answers the
// interrupted prompt before the new one. It reports false when the
// session/cancel that ends the wait (or the request's end) came first.
func (s *acpSession) afterResumed(ctx context.Context) bool {
	s.mu.Lock()
	done := s.resumed
	s.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.cancelled
}
