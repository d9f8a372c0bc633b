package rpc

import (
	"context"
	"errors"
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// handle runs one decoded command and returns its response, or nil when
// the response is sent later by the command itself (prompt, compact).
func (s *server) handle(c Command) *Response {
	sess := s.session()
	r := func(resp Response) *Response { return &resp }
	switch c.Type {
	case CmdPrompt:
		return s.prompt(c)
	case CmdSteer:
		sess.Steer(userMessage(c))
		return r(ok(c.ID, c.Type, queued))
	case CmdFollowUp:
		sess.FollowUp(userMessage(c))
		return r(ok(c.ID, c.Type, queued))
	case CmdAbort:
		s.abort()
	case CmdNewSession:
		return r(s.newSession(c))
	case CmdGetState:
		return r(ok(c.ID, c.Type, s.state(sess)))
	case CmdGetMessages:
		return r(ok(c.ID, c.Type, messagesResult{Messages: nonNil(sess.Messages())}))
	case CmdSetModel:
		return r(s.setModel(c, sess))
	case CmdGetAvailableModels:
		return r(ok(c.ID, c.Type, modelsResult{Models: s.models(sess)}))
	case CmdCompact:
		return s.compact(c, sess)
	case CmdSetAutoCompaction:
		sess.SetAutoCompactionEnabled(*c.Enabled)
	case CmdSetAutoRetry:
		sess.SetAutoRetryEnabled(*c.Enabled)
	case CmdAbortRetry:
		sess.AbortRetry()
	case CmdGetSessionStats:
		return r(ok(c.ID, c.Type, s.stats(sess)))
	case CmdGetLastAssistantText:
		var res textResult
		if t := strings.TrimSpace(lastAssistantText(sess.Messages())); t != "" {
			res.Text = &t
		}
		return r(ok(c.ID, c.Type, res))
	case CmdSetSessionName:
		name := strings.TrimSpace(c.Name)
		if name == "" {
			return r(fail(c.ID, c.Type, "session name cannot be empty"))
		}
		if err := sess.SetName(name); err != nil {
			return r(fail(c.ID, c.Type, err.Error()))
		}
	case CmdSetEventOptions:
		// Events written before the answer keep the form they had.
		s.caughtUp()
		s.deltas.Store(!*c.Partial)
	default:
		if resp, handled := s.handlePi(c, sess); handled {
			return resp
		}
		// DecodeCommand lets only known commands through.
		return r(fail(c.ID, c.Type, "unknown command: "+c.Type))
	}
	return r(ok(c.ID, c.Type, nil))
}

func userMessage(c Command) llm.Message {
	content := append([]llm.Content{llm.Text(c.Message)}, c.Images...)
	return llm.Message{Role: llm.User, Content: content, Timestamp: llm.Now()}
}

// prompt starts a run, or queues the message when one is going and the
// client said how. It answers before the run's first event.
func (s *server) prompt(c Command) *Response {
	sess, sub := s.watch()
	run, err := sess.Start(s.ctx, c.Message, session.PromptOptions{Images: c.Images, Accepted: func() {
		// The previous run's agent_settled is out before this answer, and
		// nothing of the new run is.
		sub.Sync(s.ctx)
		s.respond(ok(c.ID, c.Type, started)) // Start calls this before it returns
	}})
	r := func(resp Response) *Response { return &resp }
	switch {
	case errors.Is(err, session.ErrCompacting):
		return r(fail(c.ID, c.Type, "compaction is running; wait for compaction_end, or abort it"))
	case errors.Is(err, session.ErrBusy):
		switch c.StreamingBehavior {
		case Steer:
			sess.Steer(userMessage(c))
		case FollowUp:
			sess.FollowUp(userMessage(c))
		default:
			return r(fail(c.ID, c.Type, `the agent is already running a prompt: send this one with "streamingBehavior": "steer" or "followUp" to queue it, or abort first`))
		}
		return r(ok(c.ID, c.Type, queued))
	case err != nil:
		return r(fail(c.ID, c.Type, err.Error()))
	}
	go func() {
		if err := run.Wait(); err != nil {
			s.log.Info("rpc: prompt ended with an error", "err", err)
		}
	}()
	return nil
}

// abort stops the run (and a compaction) and answers once it has settled
// and its last event is written.
func (s *server) abort() {
	sess := s.session()
	sess.Abort()
	<-sess.Idle()
	s.caughtUp()
}

// newSession replaces the session with a fresh one from Config.NewSession.
func (s *server) newSession(c Command) Response {
	if s.cfg.NewSession == nil {
		return fail(c.ID, c.Type, "new_session is not available")
	}
	s.abort()
	if err := s.swapTo(s.cfg.NewSession); err != nil {
		return fail(c.ID, c.Type, err.Error())
	}
	return ok(c.ID, c.Type, NewSessionResult{})
}

// swapTo serves the session open returns from now on. What the client set
// for this process (auto-retry, auto-compaction, the model, thinking and
// queue modes) carries over. The current run has settled.
func (s *server) swapTo(open func(context.Context) (*session.Session, error)) error {
	s.mu.Lock()
	old, target := s.sess, s.target
	s.mu.Unlock()
	sess, err := open(s.ctx)
	if err != nil {
		return err
	}
	st := old.State()
	sess.SetAutoRetryEnabled(old.AutoRetryEnabled())
	sess.SetAutoCompactionEnabled(st.AutoCompaction)
	sess.SetSteeringMode(st.SteeringMode)
	sess.SetFollowUpMode(st.FollowUpMode)
	if target != nil && !sameModel(target.Model, sess.State().Model) {
		sess.SetModel(*target)
	}
	if st.Thinking != "" {
		sess.SetThinking(clampThinking(sess.State().Model, st.Thinking))
	}
	s.mu.Lock()
	sub := s.sub
	s.mu.Unlock()
	if sub != nil {
		sub.Close()
	}
	s.adopt(sess)
	return nil
}

func sameModel(a, b llm.Model) bool {
	return a.Provider == b.Provider && a.ID == b.ID && a.API == b.API && a.BaseURL == b.BaseURL
}

func (s *server) models(sess *session.Session) []llm.Model {
	if s.cfg.Models == nil {
		return []llm.Model{sess.State().Model}
	}
	return nonNil(s.cfg.Models())
}

func (s *server) setModel(c Command, sess *session.Session) Response {
	for _, m := range s.models(sess) {
		if m.Provider != c.Provider || m.ID != c.ModelID {
			continue
		}
		if s.cfg.Connect == nil {
			return fail(c.ID, c.Type, "set_model is not available")
		}
		t, err := s.cfg.Connect(s.ctx, m)
		if err != nil {
			return fail(c.ID, c.Type, err.Error())
		}
		sess.SetModel(t)
		s.mu.Lock()
		s.target = &t
		s.mu.Unlock()
		return ok(c.ID, c.Type, t.Model)
	}
	return fail(c.ID, c.Type, "model not found: "+c.Provider+"/"+c.ModelID)
}

// compact runs an explicit compaction in the background (it calls the
// model) and answers when it is done, after its compaction_end line, with
// its result.
func (s *server) compact(c Command, sess *session.Session) *Response {
	_, sub := s.watch()
	run, err := sess.StartCompact(s.ctx)
	if err != nil {
		r := fail(c.ID, c.Type, "the agent is busy; abort or wait for agent_settled before compacting")
		if errors.Is(err, session.ErrCompacting) {
			r.Error = "a compaction is already running; wait for compaction_end"
		}
		return &r
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := run.Wait()
		sub.Sync(s.ctx) // compaction_end is out
		if err != nil {
			s.respond(fail(c.ID, c.Type, err.Error()))
			return
		}
		s.respond(ok(c.ID, c.Type, run.Compaction()))
	}()
	return nil
}

// lastAssistantText is the text of the latest assistant message that has
// any, or "".
func lastAssistantText(ms []llm.Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if m := &ms[i]; m.Role == llm.Assistant {
			if t := m.TextOf(); t != "" {
				return t
			}
		}
	}
	return ""
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
