package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// compact replaces the older part of the working context with a summary
// written by the current model, keeping the recent part whole.
func (s *Session) compact(ctx context.Context, reason CompactionReason, willRetry bool) (*CompactionResult, error) {
	s.mu.Lock()
	msgs := append([]llm.Message(nil), s.messages...)
	ids := append([]string(nil), s.ids...)
	provider, model := s.target.Provider, s.target.Model
	s.compacting = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.compacting = false
		s.mu.Unlock()
	}()
	s.hub.emit(Event{Type: CompactionStart, Reason: reason})
	end := func(res *CompactionResult, failed error, retry bool) {
		e := Event{Type: CompactionEnd, Reason: reason, Compaction: res, Aborted: failed != nil && ctx.Err() != nil, WillRetry: retry}
		if failed != nil && !e.Aborted {
			e.ErrorMessage = failed.Error()
		}
		s.hub.emit(e)
	}

	cut := cutPoint(msgs, s.keepBudget(model))
	if cut <= 0 {
		end(nil, nil, false)
		return nil, ErrNothingToCompact
	}
	before := contextTokens(msgs)
	summary, err := s.summarize(ctx, provider, model, msgs[:cut])
	if err != nil {
		if ctx.Err() != nil {
			end(nil, err, false)
			return nil, stopped(ctx, "compaction")
		}
		err = fmt.Errorf("session: compaction: %w", err)
		end(nil, err, false)
		return nil, err
	}
	res := &CompactionResult{Summary: summary, FirstKeptEntryID: ids[cut], TokensBefore: before}
	if j := s.cfg.Store; j != nil {
		if err := j.AppendCompaction(summary, res.FirstKeptEntryID, before); err != nil {
			s.storeFailed(OpSaveCompaction, err)
		}
	}
	head := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(journal.SummaryText(summary))}, Timestamp: llm.Now()}
	s.mu.Lock()
	// Messages that arrived meanwhile (none while a prompt runs) stay.
	rest := s.messages[len(msgs):]
	restIDs := s.ids[len(ids):]
	s.messages = append(append([]llm.Message{head}, msgs[cut:]...), rest...)
	s.ids = append(append([]string{""}, ids[cut:]...), restIDs...)
	s.mu.Unlock()
	end(res, nil, willRetry)
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

// summarize asks the model for a summary of older. Its call follows the
// retry policy for transient failures, quietly (the prompt's own retry
// events are not involved).
func (s *Session) summarize(ctx context.Context, p llm.Provider, m llm.Model, older []llm.Message) (string, error) {
	text := transcript(older, m.ContextWindow)
	req := &llm.Request{
		Model:     m,
		System:    summaryPrompt,
		Messages:  []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("Summarise this conversation:\n\n<conversation>\n" + text + "\n</conversation>")}, Timestamp: llm.Now()}},
		MaxTokens: min(max(m.MaxTokens, 1024), 4096),
	}
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
		rep := s.inspect(err)
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
// tool output says little that its first part does not.
const perMessage = 4000

// transcript renders messages as plain text for the summary call, fitted
// to the model's window (keeping the start and the end when it must cut).
func transcript(ms []llm.Message, window int) string {
	var b strings.Builder
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
			fmt.Fprintf(&b, "[%s]: %s\n", role, clip(t, perMessage))
		}
		for _, c := range m.ToolCalls() {
			fmt.Fprintf(&b, "[assistant calls %s]: %s\n", c.Name, clip(string(c.Arguments), perMessage))
		}
	}
	out := b.String()
	if window <= 0 {
		return out
	}
	// Leave room for the instructions and the summary itself.
	limit := max(window*4*60/100, 400)
	if len(out) <= limit {
		return out
	}
	head := limit * 3 / 10
	tail := limit - head
	return out[:head] + fmt.Sprintf("\n[… %d characters omitted …]\n", len(out)-limit) + out[len(out)-tail:]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf(" [… %d more characters]", len(s)-n)
}
