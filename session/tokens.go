package session

import "github.com/rally-agent/rally/llm"

// contextTokens is the size of the context ms: what the provider reported
// for the last answer that has usage (its input, cache reads and writes,
// and its output, which the context now holds), plus the estimate of the
// messages after it; the estimate alone when no answer reported usage. A
// failed or aborted answer's usage is partial and is not used.
func contextTokens(ms []llm.Message) int {
	counted, rest := splitCounted(ms)
	return counted + llm.EstimateTokens(rest)
}

// splitCounted finds the last answer whose usage measures the context ms
// up to it: counted is that usage, rest what came after. An answer older
// than the context's first message was given before a compaction put a
// summary there, so it counted a context that no longer exists and is
// not used (0 and all of ms when no answer counts).
func splitCounted(ms []llm.Message) (counted int, rest []llm.Message) {
	for i := len(ms) - 1; i >= 0; i-- {
		m := &ms[i]
		if u := m.Usage; m.Role == llm.Assistant && u != nil && !failedAnswer(*m) {
			if m.Timestamp < ms[0].Timestamp {
				break
			}
			if used := u.Input + u.CacheRead + u.CacheWrite + u.Output; used > 0 {
				return used, ms[i+1:]
			}
		}
	}
	return 0, ms
}
