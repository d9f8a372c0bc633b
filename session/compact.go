package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// Compaction defaults (the settings' compaction group).
const (
	DefaultThresholdPercent = 85
	DefaultKeepRecentTokens = 20000
)

// CompactionConfig tunes compaction. The zero value uses the defaults.
type CompactionConfig struct {
	// ThresholdPercent compacts after a run whose last call used more than
	// this share of the context window; 0 means DefaultThresholdPercent.
	ThresholdPercent int
	// KeepRecentTokens is how much of the most recent conversation is kept
	// word for word (at most 40% of the context window); 0 means
	// DefaultKeepRecentTokens.
	KeepRecentTokens int
}

// ErrNothingToCompact is returned when the conversation has no older part
// that a summary could replace.
var ErrNothingToCompact = errors.New("session: nothing to compact: the conversation is all recent")

// CompactionResult is compaction_end's result and the persisted entry.
type CompactionResult struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
}

// OverflowRecoveryFailed is compaction_end's errorMessage when the
// provider overflows again after the overflow compaction: pi's own words,
// which pi's clients show.
const OverflowRecoveryFailed = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."

// compact is compactFor with nothing to send after the context.
func (s *Session) compact(ctx context.Context, reason CompactionReason, willRetry bool) (*CompactionResult, error) {
	return s.compactFor(ctx, reason, willRetry, nil)
}

// compactFor is one compaction operation, with one compaction_start and
// one compaction_end, that makes the working context fit before the next
// call, which sends next after it (a prompt not yet in it): it summarises
// the older part with the current model and keeps the recent part whole;
// when the estimate says the result still does not fit the window, it
// summarises once more keeping a quarter as much, inside the same
// operation; and then, only then, it fails with a *TooLargeError that
// names both numbers. Its error is compaction_end's too, so the event that
// ends an overflowing prompt says why.
func (s *Session) compactFor(ctx context.Context, reason CompactionReason, willRetry bool, next []llm.Message) (*CompactionResult, error) {
	s.mu.Lock()
	s.compacting, s.compactReason = true, reason
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.compacting = false
		s.mu.Unlock()
	}()
	s.hub.emit(CompactionStartEvent{Reason: reason})
	traced := s.traceCompaction(ctx, reason)
	res, err := s.compactSteps(ctx, next)
	traced(res, err)
	e := CompactionEndEvent{Reason: reason, Result: res, Aborted: err != nil && ctx.Err() != nil, WillRetry: willRetry && err == nil}
	if err != nil && !e.Aborted {
		e.ErrorMessage = err.Error()
	}
	s.hub.emit(e)
	if e.Aborted {
		return nil, stopped(ctx, "compaction")
	}
	return res, err
}

// compactSteps is the work of compactFor: one summary, and a second with
// a smaller keep when the first leaves the context too large by the
// estimate (there is no second when nothing but the first summary would
// be summarised again).
func (s *Session) compactSteps(ctx context.Context, next []llm.Message) (*CompactionResult, error) {
	m := s.model()
	keep := s.keepBudget(m)
	res, err := s.summarizeOlder(ctx, keep)
	if err != nil || m.ContextWindow <= 0 {
		return res, err
	}
	need := s.need(s.sendableView(), next...)
	if need <= m.ContextWindow {
		return res, nil
	}
	more, err := s.summarizeOlder(ctx, max(keep/4, 1))
	switch {
	case err == nil:
		more.TokensBefore = res.TokensBefore // the operation's before
		res = more
		need = s.need(s.sendableView(), next...)
	case !errors.Is(err, ErrNothingToCompact):
		return res, err
	}
	if need > m.ContextWindow {
		return res, &TooLargeError{Need: need, Window: m.ContextWindow, Compacted: true}
	}
	return res, nil
}

// summarizeOlder replaces the older part of the working context by its
// summary, keeping keep tokens of the recent conversation whole, and
// persists the compaction entry. An older part that is only an earlier
// summary is ErrNothingToCompact: summarising a summary gains nothing.
func (s *Session) summarizeOlder(ctx context.Context, keep int) (*CompactionResult, error) {
	s.mu.Lock()
	msgs := append([]llm.Message(nil), s.messages...)
	ids := append([]string(nil), s.ids...)
	provider, model := s.target.Provider, s.effective(s.target.Model)
	s.mu.Unlock()

	cut := cutPoint(msgs, keep)
	if cut <= 0 || cut == 1 && journal.IsSummary(msgs[0]) {
		return nil, ErrNothingToCompact
	}
	before := contextTokens(msgs)
	summary, err := s.summarize(ctx, provider, model, msgs[:cut])
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("session: compaction: %w", err)
	}
	res := &CompactionResult{Summary: summary, FirstKeptEntryID: ids[cut], TokensBefore: before}
	// One time for the entry and the summary message, so a resumed
	// session's context is the live one.
	at := llm.Now()
	if j := s.cfg.Store; j != nil {
		if err := j.AppendCompaction(summary, res.FirstKeptEntryID, before, time.UnixMilli(at)); err != nil {
			s.storeFailed(OpSaveCompaction, err)
		}
	}
	head := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(journal.SummaryText(summary))}, Timestamp: at}
	s.mu.Lock()
	// Messages that arrived meanwhile (none while a prompt runs) stay.
	rest := s.messages[len(msgs):]
	restIDs := s.ids[len(ids):]
	s.messages = append(append([]llm.Message{head}, msgs[cut:]...), rest...)
	s.ids = append(append([]string{""}, ids[cut:]...), restIDs...)
	s.mu.Unlock()
	return res, nil
}

func (s *Session) keepBudget(m llm.Model) int {
	keep := s.cfg.Compaction.KeepRecentTokens
	if keep <= 0 {
		keep = DefaultKeepRecentTokens
	}
	if m.ContextWindow > 0 {
		keep = min(keep, m.ContextWindow*40/100)
	}
	return keep
}

// cutPoint picks where the kept part starts: the earliest user or
// assistant message from which the rest fits keep tokens (a tool result
// never starts it: it belongs to the call before it). When not even the
// last such message fits, that message is kept anyway: a summary of all
// before it is the most compaction can do. 0 means nothing to summarise.
func cutPoint(msgs []llm.Message, keep int) int {
	cut, acc, latest := 0, 0, 0
	for i := len(msgs) - 1; i > 0; i-- {
		acc += llm.MessageTokens(&msgs[i])
		if msgs[i].Role == llm.ToolResult {
			continue
		}
		if latest == 0 {
			latest = i
		}
		if acc > keep {
			break
		}
		cut = i
	}
	if cut == 0 {
		cut = latest
	}
	return cut
}

// summaryPrompt asks for a structured summary: goal, decisions, files
// touched, what is done, open tasks.
const summaryPrompt = `You summarise a coding agent's conversation so that the work can continue from the summary alone. ` +
	`Write these sections in Markdown: "## Goal" (what the user wants, in their words where possible), ` +
	`"## Decisions" (what was decided and why), "## Files touched" (paths and what changed), ` +
	`"## Done" (commands run and tools used, one per line as "- tool: arguments"), ` +
	`"## Open tasks" (what is left). Be concise and exact; keep names, paths and numbers.`

// summarize asks the model for a summary of older. Every request fits
// the model's window: an older part too large for one is summarised in
// pieces, each request carrying the summary so far (a rolling summary).
func (s *Session) summarize(ctx context.Context, p llm.Provider, m llm.Model, older []llm.Message) (string, error) {
	b := s.summaryBudget(m)
	summary := ""
	for i, piece := range pieces(older, b.pieceChars) {
		if i > 0 {
			// The summary so far opens the next piece the way a compacted
			// context opens with its summary, so one summary covers both.
			piece = "[user]: " + journal.SummaryText(summary) + "\n" + piece
		}
		text := "Summarise this conversation:\n\n<conversation>\n" + piece + "</conversation>"
		req := &llm.Request{
			Model:     m,
			System:    summaryPrompt,
			Messages:  []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: llm.Now()}},
			MaxTokens: b.output,
		}
		out, err := s.summaryCall(ctx, p, m, req)
		if err != nil {
			return "", err
		}
		summary = out
	}
	return summary, nil
}

// summaryBudget sizes the summary requests for m's window.
type summaryBudget struct {
	output     int // the summary's max tokens
	pieceChars int // transcript characters one request may carry; 0: no limit
}

// Room kept free in a summary request, on top of the output and the
// instructions: the estimate is only an estimate.
const (
	summaryMargin   = 10 // percent of the window
	minSummaryChars = 800
)

func (s *Session) summaryBudget(m llm.Model) summaryBudget {
	b := summaryBudget{output: min(max(m.MaxTokens, 1024), 4096)}
	w := m.ContextWindow
	if w <= 0 {
		return b
	}
	b.output = min(b.output, max(w/4, 64))
	s.mu.Lock()
	scale := max(s.scale, 1)
	s.mu.Unlock()
	// The instructions, the previous summary (at most one output long)
	// and the framing words come on top of the piece.
	fixed := (len(summaryPrompt)+400)/4 + b.output
	room := w - w*summaryMargin/100 - b.output - fixed
	b.pieceChars = max(int(float64(room)*4/scale), minSummaryChars)
	return b
}

// summaryCall makes one summary call. It follows the retry policy for
// transient failures, quietly (the prompt's own retry events are not
// involved).
func (s *Session) summaryCall(ctx context.Context, p llm.Provider, m llm.Model, req *llm.Request) (string, error) {
	pol := s.policy(m.Provider)
	for n := 1; ; n++ {
		req.Attempt = n
		out, err := s.call(ctx, p, req)
		if err == nil {
			if strings.TrimSpace(out) == "" {
				return "", errors.New("the model returned an empty summary")
			}
			return out, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		rep := s.inspect(ctx, err)
		d := pol.Decide(retry.Attempt{Class: rep.Class, N: n, Hint: rep.Hint, Now: s.now()})
		s.logger().Warn("compaction retry decision", "action", d.Action.String(), "attempt", n, "delay", d.Delay,
			"class", rep.Class.String(), "provider", m.Provider, "error", rep.Message, "reason", d.Reason)
		if d.Action != retry.Retry {
			return "", err
		}
		t := time.NewTimer(d.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// call streams one model call and returns its text.
func (s *Session) call(ctx context.Context, p llm.Provider, req *llm.Request) (string, error) {
	s.traceSummaryCall()
	st, err := p.Stream(ctx, req)
	if err != nil {
		return "", err
	}
	msg, err := llm.Collect(st)
	if err != nil {
		return "", err
	}
	return msg.TextOf(), nil
}

// perMessage caps one message in the transcript sent for summary: a huge
// tool output says little that its start and end do not.
const perMessage = 4000

// pieces renders messages as plain text for the summary calls, in pieces
// of at most limit characters (0: one piece), cut between messages; a
// message longer than a piece by itself is cut to its head and tail.
func pieces(ms []llm.Message, limit int) []string {
	each := perMessage
	if limit > 0 {
		each = min(each, limit)
	}
	var out []string
	var b strings.Builder
	add := func(line string) {
		if limit > 0 && b.Len() > 0 && b.Len()+len(line) > limit {
			out = append(out, b.String())
			b.Reset()
		}
		b.WriteString(line)
	}
	for i := range ms {
		m := &ms[i]
		var role string
		switch m.Role {
		case llm.User:
			role = "user"
		case llm.Assistant:
			role = "assistant"
		case llm.ToolResult:
			role = "tool result " + m.ToolName
		default:
			role = string(m.Role)
		}
		if t := strings.TrimSpace(m.TextOf()); t != "" {
			add(fmt.Sprintf("[%s]: %s\n", role, headTail(t, each-len(role)-6)))
		}
		for _, c := range m.ToolCalls() {
			add(fmt.Sprintf("[assistant calls %s]: %s\n", c.Name, headTail(string(c.Arguments), each-len(c.Name)-22)))
		}
	}
	if b.Len() > 0 || len(out) == 0 {
		out = append(out, b.String())
	}
	return out
}

// headTail cuts s to about n bytes: its head and its tail, with a marker
// saying how much of the middle was left out.
func headTail(s string, n int) string {
	const marker = "\n[… %d characters cut …]\n"
	if len(s) <= n {
		return s
	}
	n = max(n-len(marker)-8, 16)
	head := n * 4 / 10
	tail := n - head
	// Cut on rune boundaries.
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + fmt.Sprintf(marker, from-head) + s[from:]
}
