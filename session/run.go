package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// run is one prompt: agent runs and the retry chain around them.
func (s *Session) run(ctx context.Context, prompt []llm.Message) (err error) {
	ctx, endTrace := s.tracePrompt(ctx)
	defer func() { endTrace(err) }()
	s.mu.Lock()
	s.prompt = prompt
	if s.attempt == 0 { // a resumed wait for a reset (resume.go) goes on its chain
		s.resetWaited = false
	}
	s.mu.Unlock()
	if err := s.prepare(ctx, prompt); err != nil {
		return err
	}
	header := 1
	for {
		ac, used := s.agentConfig()
		r := &runState{s: s, used: used}
		ac.Resume = r.resume
		out, runErr := ac.Run(ctx, s.sendable(), agent.Options{Attempt: header, Prompt: prompt}, r.event)
		prompt = nil
		next, err := s.decide(ctx, r, out, runErr)
		if next == 0 {
			return err
		}
		header = next
	}
}

// agentConfig is the agent loop's configuration for the next run, and the
// target its calls go to.
func (s *Session) agentConfig() (*agent.Config, llm.Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &agent.Config{
		Provider: s.target.Provider,
		Model:    s.effective(s.target.Model),
		System:   s.cfg.System,
		Tools:    s.cfg.Tools,
		MaxTurns: s.cfg.MaxTurns,
		Thinking: s.cfg.Thinking,
		Steering: s.takeSteering,
		FollowUp: s.takeFollowUp,
		Pause:    s.full,
		Waiting:  s.hub.waiting,
	}, s.target
}

// sendable is the context sent to the model: the working context without
// failed or aborted assistant messages, whose partial content (a cut tool
// call, half a sentence) providers reject or the model would repeat.
func (s *Session) sendable() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Room for what a run adds (the agent loop appends to it), so a long
	// context is copied once per run, here, and not again per turn; a
	// short one gets less, as it is cheap to grow and every streaming
	// session holds the spare room (issue 25: heap per session): a prompt
	// and its answer take 3 slots, 576 bytes, where 5 took 896.
	out := make([]llm.Message, 0, len(s.messages)+min(16, 2+len(s.messages)/16))
	for _, m := range s.messages {
		if !failedAnswer(m) {
			out = append(out, m)
		}
	}
	return out
}

// sendableView is sendable for a caller that only reads it, without a copy
// when nothing is to be left out (nearly always): estimating a long
// context must not copy it. It is read on the run's goroutine, the only
// one that changes the context, so a later change cannot race with it.
func (s *Session) sendableView() []llm.Message {
	s.mu.Lock()
	ms := s.messages
	s.mu.Unlock()
	if slices.ContainsFunc(ms, failedAnswer) {
		return s.sendable()
	}
	return ms[:len(ms):len(ms)]
}

// failedAnswer reports an assistant message that failed or was aborted,
// which is never sent again.
func failedAnswer(m llm.Message) bool {
	return m.Role == llm.Assistant && (m.StopReason == llm.Error || m.StopReason == llm.Aborted)
}

// runState is one agent run seen from the session: it records messages as
// they end and holds back agent_end until the session knows whether a
// retry follows.
type runState struct {
	s        *Session
	used     llm.Target // what this run's calls went to
	agentEnd *AgentEndEvent
	failed   *llm.Message
	// resumed is the decision the streaming message records when its
	// stream was continued after a drop (resume.go).
	resumed *journal.Decision
}

func (r *runState) event(e agent.Event) {
	if p := r.s.ptrace; p != nil {
		p.event(e, r.used.Model)
	}
	switch e := e.(type) {
	case AgentEndEvent:
		r.agentEnd = &e
		return
	case ToolExecutionStartEvent:
		r.s.setTool(e.ToolName)
	case ToolExecutionEndEvent:
		r.s.setTool("")
	case MessageEndEvent:
		m := *e.Message
		if failedAnswer(m) {
			// Kept aside until the session decides whether a retry
			// replaces it.
			r.failed, r.resumed = &m, nil
			r.s.hub.emit(e)
			return
		}
		var d *journal.Decision
		if m.Role == llm.Assistant {
			d = r.s.chainSucceeds()
			if d == nil {
				d, r.resumed = r.resumed, nil
			}
		}
		r.s.recordDecided(m, false, d)
		r.s.hub.emit(e)
		if m.Role == llm.Assistant {
			r.s.succeeded()
		}
		return
	}
	r.s.hub.emit(e)
}

// succeeded ends an open retry chain at the first successful assistant
// message after a retry.
func (s *Session) succeeded() {
	s.mu.Lock()
	n := s.attempt
	s.attempt = 0
	s.mu.Unlock()
	if n > 0 {
		s.hub.emit(AutoRetryEndEvent{Success: true, Attempt: n})
	}
}

// chainSucceeds is the decision an answer records when it ends an open
// retry chain; nil outside a chain.
func (s *Session) chainSucceeds() *journal.Decision {
	s.mu.Lock()
	n := s.attempt
	s.mu.Unlock()
	if n == 0 {
		return nil
	}
	return &journal.Decision{Attempt: n, End: journal.EndSucceeded}
}

// record adds a message to the journal and, unless a retry replaced it,
// to the working context.
func (s *Session) record(m llm.Message, retried bool) { s.recordDecided(m, retried, nil) }

// recordDecided is record with what was decided about a failed call (the
// journal keeps it beside the message, for viewers).
func (s *Session) recordDecided(m llm.Message, retried bool, d *journal.Decision) {
	var id string
	if j := s.cfg.Store; j != nil {
		var err error
		if id, err = j.AppendDecided(m, retried, d); err != nil {
			s.storeFailed(OpSaveMessage, err)
		}
	}
	if !retried {
		s.mu.Lock()
		s.messages = append(s.messages, m)
		s.ids = append(s.ids, id)
		s.mu.Unlock()
	}
}

func (r *runState) endAgent(willRetry bool) {
	if r.agentEnd == nil {
		return
	}
	e := *r.agentEnd
	e.WillRetry = willRetry
	r.agentEnd = nil
	r.s.hub.emit(e)
}

// closeChain ends an open retry chain with a failure.
func (s *Session) closeChain(attempt int, finalError string) {
	if attempt <= 0 {
		return
	}
	s.hub.emit(AutoRetryEndEvent{Success: false, Attempt: attempt, FinalError: finalError})
	s.mu.Lock()
	s.attempt = 0
	s.mu.Unlock()
}

// decide looks at how a run ended. It returns the attempt
// number for the next run's x-rally-attempt header, or 0 and the prompt's
// result when the prompt is over.
func (s *Session) decide(ctx context.Context, r *runState, out agent.Outcome, runErr error) (next int, err error) {
	s.mu.Lock()
	attempt, noRetry := s.attempt, s.noRetry
	s.mu.Unlock()

	if out.CallErr == nil {
		r.endAgent(out.Paused && runErr == nil)
		if runErr != nil {
			if ctx.Err() != nil {
				s.closeChain(attempt, RetryCancelled)
				return 0, stopped(ctx, "prompt")
			}
			return 0, runErr
		}
		if out.Paused {
			return s.makeRoom(ctx)
		}
		s.afterSuccess(ctx)
		return 0, nil
	}

	failed := r.failed
	if failed == nil { // cannot happen: a failed call always ends a message
		failed = &llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: out.CallErr.Error()}
	}
	if failed.StopReason == llm.Aborted || ctx.Err() != nil {
		s.recordDecided(*failed, false, &journal.Decision{Attempt: attempt, Reason: RetryCancelled, End: journal.EndCancelled})
		r.endAgent(false)
		s.closeChain(attempt, RetryCancelled)
		return 0, stopped(ctx, "prompt")
	}

	rep := s.inspect(ctx, out.CallErr)
	switch {
	case rep.Class == retry.ContextOverflow:
		return s.overflow(ctx, r, failed, attempt, out.CallErr, rep)
	case noRetry: // AbortRetry landed while the retried call ran
		s.recordDecided(*failed, false, decided(attempt, rep.Class, RetryCancelled, journal.EndCancelled))
		r.endAgent(false)
		s.closeChain(attempt, RetryCancelled)
		return 0, &RunError{Class: rep.Class, Retries: attempt, Reason: RetryCancelled, Err: out.CallErr}
	}
	return s.retry(ctx, r, failed, attempt, rep, out)
}

// retry is the retry path: decide, switch if the
// policy wants it, emit, wait.
func (s *Session) retry(ctx context.Context, r *runState, failed *llm.Message, attempt int, rep retry.Report, out agent.Outcome) (int, error) {
	n := attempt + 1
	s.mu.Lock()
	s.attempt = n
	afterReset := s.resetWaited
	s.mu.Unlock()
	pol := s.policy(r.used.Model.Provider)
	// Output is what someone saw: streamed deltas nobody shows do not count.
	seen := out.Output && !s.cfg.PartialsHidden
	d := pol.Decide(retry.Attempt{Class: rep.Class, N: n, Hint: rep.Hint, CanSwitch: s.cfg.Switcher != nil, Output: seen, Now: s.now(), AfterReset: afterReset,
		Learned: s.learnedReset(ctx, pol, r.used, rep)})
	switched := ""
	if d.Action == retry.Switch {
		if t, ok := s.cfg.Switcher.Switch(ctx, r.used, rep); ok {
			s.mu.Lock()
			s.target = t
			s.mu.Unlock()
			s.loadWindow(ctx)
			switched = t.Name
		} else {
			d = *d.Else
		}
	}
	s.logger().Warn("retry decision", "action", d.Action.String(), "attempt", n, "maxAttempts", pol.MaxRetries,
		"delay", d.Delay, "class", rep.Class.String(), "provider", r.used.Model.Provider, "model", r.used.Model.ID,
		"error", failed.ErrorMessage, "reason", d.Reason)
	s.traceDecision(out.CallErr, rep, n, d, switched)

	if d.Action == retry.GiveUp {
		end := journal.EndFailed
		if d.Exhausted {
			end = journal.EndExhausted
		}
		s.recordDecided(*failed, false, decided(attempt, rep.Class, d.Reason, end))
		r.endAgent(false)
		s.mu.Lock()
		s.attempt = attempt
		s.mu.Unlock()
		s.closeChain(attempt, failed.ErrorMessage)
		return 0, &RunError{Class: rep.Class, Retries: attempt, Reason: d.Reason, Exhausted: d.Exhausted, Err: out.CallErr}
	}

	r.endAgent(true)
	if len(failed.Content) > 0 {
		s.hub.emit(MessageDiscardedEvent{Message: failed})
	}
	s.mu.Lock()
	s.retries++
	s.waiting = &retryWait{attempt: n, max: pol.MaxRetries, until: time.Now().Add(d.Delay), reason: failed.ErrorMessage}
	s.mu.Unlock()
	if d.ResetWait { // before auto_retry_start, so a face knows what that one starts
		s.announceResetWait(n, pol.MaxRetries, d, failed.ErrorMessage)
	}
	s.hub.emit(AutoRetryStartEvent{Attempt: n, MaxAttempts: pol.MaxRetries, DelayMs: d.Delay.Milliseconds(),
		ErrorMessage: failed.ErrorMessage, ErrorClass: rep.Class, SwitchedTo: switched})

	dec := decided(n, rep.Class, d.Reason, "")
	dec.DelayMs, dec.SwitchedTo = d.Delay.Milliseconds(), switched
	waited := s.traceWait(n, d.Delay, switched)
	ok := s.wait(ctx, d.Delay, d.ResetWait, n)
	waited(ok)
	s.endWait()
	if !ok {
		// Cancelled: the failed message is the prompt's final state after all.
		dec.End, dec.Reason = journal.EndCancelled, RetryCancelled
		s.recordDecided(*failed, false, dec)
		s.closeChain(n, RetryCancelled)
		if ctx.Err() != nil {
			return 0, stopped(ctx, "prompt")
		}
		return 0, &RunError{Class: rep.Class, Retries: attempt, Err: fmt.Errorf("%w: %w", ErrRetryCancelled, out.CallErr)}
	}
	s.recordDecided(*failed, true, dec)
	return n + 1, nil
}

// decided is the journal's record of a decision about a failed call.
func decided(attempt int, class retry.Class, reason string, end journal.End) *journal.Decision {
	return &journal.Decision{Attempt: attempt, Class: class.String(), Reason: reason, End: end}
}

// wait sleeps d unless the retry or the run is cancelled; it reports
// whether the whole delay passed. A wait for a reset runs on the wall
// clock (resetwait.go).
func (s *Session) wait(ctx context.Context, d time.Duration, reset bool, attempt int) bool {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	s.mu.Lock()
	if s.noRetry || !s.autoRetry { // cancelled before the wait began
		s.mu.Unlock()
		return false
	}
	s.retrying, s.stopWait = true, stop
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.retrying, s.stopWait = false, nil
		s.mu.Unlock()
	}()
	if reset {
		return s.sleepUntilReset(wctx, d, attempt)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return wctx.Err() == nil
	case <-wctx.Done():
		return false
	}
}

// overflow hands a context overflow to compaction, never to retry.
// It learns the window the error states first. One overflow compaction
// per prompt (DESIGN §3.4): when the provider still overflows after it,
// the prompt ends as pi ends it, with a compaction_end saying the
// recovery failed and no further request; the prompt's error names both
// numbers. A prompt that alone exceeds the window fails at once.
func (s *Session) overflow(ctx context.Context, r *runState, failed *llm.Message, attempt int, callErr error, rep retry.Report) (int, error) {
	s.learn(ctx, r.used.Model, rep)
	s.traceDecision(callErr, rep, attempt, retry.Decision{Action: retry.GiveUp, Reason: rep.Reason}, "")
	sent := s.sendableView()
	s.calibrate(sent, rep)
	m := s.model()
	s.mu.Lock()
	auto, n := s.autoCompact, s.overflows
	s.overflows++
	s.mu.Unlock()
	fail := func(cause error) (int, error) {
		s.recordDecided(*failed, false, decided(attempt, retry.ContextOverflow, cause.Error(), journal.EndFailed))
		r.endAgent(false)
		if n > 0 { // after agent_end, as pi sends it
			s.hub.emit(CompactionEndEvent{Reason: ReasonOverflow, ErrorMessage: OverflowRecoveryFailed})
		}
		s.closeChain(attempt, failed.ErrorMessage)
		return 0, &RunError{Class: retry.ContextOverflow, Retries: attempt, Err: cause}
	}
	need := rep.Requested
	if need <= 0 {
		need = s.need(sent)
	}
	switch alone := s.promptNeed(); {
	case !auto:
		return fail(fmt.Errorf("%w: %w", ErrContextOverflow, callErr))
	case m.ContextWindow > 0 && alone > m.ContextWindow:
		return fail(&TooLargeError{Need: alone, Window: m.ContextWindow, Prompt: true})
	case n > 0 && m.ContextWindow > 0:
		return fail(&TooLargeError{Need: need, Window: m.ContextWindow, Compacted: true})
	case n > 0:
		return fail(fmt.Errorf("%w: %w", ErrStillOverflows, callErr))
	}
	r.endAgent(true)
	_, err := s.compactFor(ctx, ReasonOverflow, true, nil)
	// Only a compaction that lets the run go on replaces the failed answer
	// (out of the context, kept in the history, as a retried one); else it
	// is the prompt's final state, and compaction_end said why.
	if err == nil {
		s.recordDecided(*failed, true, decided(attempt, retry.ContextOverflow, "", journal.EndCompaction))
	} else {
		s.recordDecided(*failed, false, decided(attempt, retry.ContextOverflow, err.Error(), journal.EndFailed))
	}
	if err != nil {
		s.closeChain(attempt, err.Error())
		var tl *TooLargeError
		switch {
		case errors.Is(err, context.Canceled):
			return 0, stopped(ctx, "prompt")
		case errors.As(err, &tl):
			return 0, &RunError{Class: retry.ContextOverflow, Retries: attempt, Err: err}
		}
		return 0, &RunError{Class: retry.ContextOverflow, Retries: attempt, Err: fmt.Errorf("%w: %w", ErrContextOverflow, err)}
	}
	return 1, nil
}

// prepare makes room before a prompt's first call: it reads the learned
// window, refuses a prompt that alone exceeds the window (no call at
// all), and compacts first when the context with the prompt passes the
// threshold, so a known window is not overflowed again.
func (s *Session) prepare(ctx context.Context, prompt []llm.Message) error {
	s.loadWindow(ctx)
	m := s.model()
	if m.ContextWindow <= 0 {
		return nil
	}
	if alone := s.promptNeed(); alone > m.ContextWindow {
		return s.refuse(prompt, &TooLargeError{Need: alone, Window: m.ContextWindow, Prompt: true})
	}
	s.mu.Lock()
	auto := s.autoCompact
	s.mu.Unlock()
	need := s.need(s.sendableView(), prompt...)
	if !auto || !s.pastThreshold(need, m.ContextWindow) {
		return nil
	}
	_, err := s.compactFor(ctx, ReasonThreshold, false, prompt)
	switch {
	case err == nil, errors.Is(err, ErrNothingToCompact):
	case ctx.Err() != nil:
		return stopped(ctx, "prompt")
	default:
		// The call may still fit; if not, its overflow compacts again.
		s.logger().Warn("compaction before the call failed", "err", err.Error())
	}
	return nil
}

// promptNeed is what a request carrying only this run's prompt needs.
func (s *Session) promptNeed() int {
	s.mu.Lock()
	prompt := s.prompt
	s.mu.Unlock()
	if len(prompt) == 0 {
		return 0
	}
	return s.need(prompt)
}

// refuse ends a prompt that cannot be sent: its run shows the prompt and a
// failed answer saying why, as a failed call would, and neither joins the
// working context (the journal keeps them, marked as replaced), so the
// next prompt is not refused for this one.
func (s *Session) refuse(prompt []llm.Message, why error) error {
	m := s.model()
	failed := llm.Message{Role: llm.Assistant, API: m.API, Provider: m.Provider, Model: m.ID,
		StopReason: llm.Error, ErrorMessage: why.Error(), Timestamp: llm.Now()}
	added := append(append([]llm.Message(nil), prompt...), failed)
	s.hub.emit(AgentStartEvent{})
	s.hub.emit(TurnStartEvent{})
	for i := range added {
		msg := &added[i]
		s.hub.emit(MessageStartEvent{Message: msg})
		s.hub.emit(MessageEndEvent{Message: msg})
		var d *journal.Decision
		if i == len(added)-1 {
			d = decided(0, retry.ContextOverflow, why.Error(), journal.EndFailed)
		}
		s.recordDecided(*msg, true, d)
	}
	s.hub.emit(TurnEndEvent{Message: &added[len(added)-1]})
	s.hub.emit(AgentEndEvent{Messages: added})
	return &RunError{Class: retry.ContextOverflow, Err: why}
}

// full reports, before a call within a run (after tool results), that
// the context it would send has passed the threshold of a known window:
// the run pauses there and makeRoom compacts, so a tool loop does not
// overflow a window the session knows either.
func (s *Session) full(convo []llm.Message) bool {
	s.mu.Lock()
	auto, off, m := s.autoCompact, s.noPause, s.effective(s.target.Model)
	s.mu.Unlock()
	if !auto || off || m.ContextWindow <= 0 {
		return false
	}
	return s.pastThreshold(s.need(convo), m.ContextWindow)
}

// makeRoom compacts for a paused run and continues it. When compaction
// cannot bring the context under the threshold, no later call of this
// prompt pauses again (the overflow path is left to deal with it).
func (s *Session) makeRoom(ctx context.Context) (int, error) {
	_, err := s.compact(ctx, ReasonThreshold, true)
	switch {
	case ctx.Err() != nil:
		return 0, stopped(ctx, "prompt")
	case err != nil && !errors.Is(err, ErrNothingToCompact):
		s.logger().Warn("compaction within the run failed", "err", err.Error())
	}
	if err != nil || s.full(s.sendableView()) {
		s.mu.Lock()
		s.noPause = true
		s.mu.Unlock()
	}
	return 1, nil
}

// pastThreshold reports that a context of tokens fills more of window
// than the compaction threshold allows.
func (s *Session) pastThreshold(tokens, window int) bool {
	pct := s.cfg.Compaction.ThresholdPercent
	if pct <= 0 {
		pct = DefaultThresholdPercent
	}
	return tokens*100 > window*pct
}

// afterSuccess compacts after a successful run whose last call overflowed
// silently (usage above the window) or passed the threshold, so the next
// prompt starts with room. A failure here is logged, not the prompt's.
func (s *Session) afterSuccess(ctx context.Context) {
	s.mu.Lock()
	auto, model := s.autoCompact, s.effective(s.target.Model)
	var usage *llm.Usage
	for i := len(s.messages) - 1; i >= 0; i-- {
		if m := &s.messages[i]; m.Role == llm.Assistant && m.Usage != nil {
			usage = m.Usage
			break
		}
	}
	s.mu.Unlock()
	if !auto || usage == nil || model.ContextWindow <= 0 {
		return
	}
	used := usage.Input + usage.CacheRead + usage.CacheWrite
	var reason CompactionReason
	switch {
	case model.Overflows(usage):
		reason = ReasonOverflow
	case s.pastThreshold(used, model.ContextWindow):
		reason = ReasonThreshold
	default:
		return
	}
	if _, err := s.compact(ctx, reason, false); err != nil && !errors.Is(err, ErrNothingToCompact) {
		s.logger().Warn("compaction after the run failed", "reason", string(reason), "err", err.Error())
	}
}
