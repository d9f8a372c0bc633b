package session

import "github.com/rally-agent/rally/llm"

// contextTokens is the size of the context ms: what the provider reported
// for the last answer that has usage (its input, cache reads and writes,
// and its output, which the context now holds), plus the estimate of the
// messages after it; the estimate alone when no answer reported usage. A
// failed or aborted answer's usage is partial and is not used.
func contextTokens(ms []llm.Message) int {
	for i := len(ms) - 1; i >= 0; i-- {
		m := &ms[i]
		if u := m.Usage; m.Role == llm.Assistant && u != nil && m.StopReason != llm.Error && m.StopReason != llm.Aborted {
			if used := u.Input + u.CacheRead + u.CacheWrite + u.Output; used > 0 {
				return used + llm.EstimateTokens(ms[i+1:])
			}
		}
	}
	return llm.EstimateTokens(ms)
}
