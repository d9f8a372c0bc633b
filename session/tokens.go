package session

import "github.com/rally-agent/rally/llm"

// imageTokens is what one image is assumed to cost in a context: its
// base64 length says nothing about it, and providers bill images at a
// roughly fixed size.
const imageTokens = 1200

// estimateTokens guesses the tokens of messages that carry no usage: about
// four characters a token (text, thinking, tool calls and their
// arguments), imageTokens an image, and a few tokens of framing a message.
// It is the one estimate: compaction's cut and budget and
// get_session_stats' context usage both come from it.
func estimateTokens(ms []llm.Message) int {
	n := 0
	for i := range ms {
		n += messageTokens(&ms[i])
	}
	return n
}

func messageTokens(m *llm.Message) int {
	chars, images := 0, 0
	for _, c := range m.Content {
		switch c.Type {
		case llm.ImageType:
			images++
		default:
			chars += len(c.Text) + len(c.Thinking) + len(c.Name) + len(c.Arguments)
		}
	}
	return (chars+3)/4 + images*imageTokens + 4
}

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
				return used + estimateTokens(ms[i+1:])
			}
		}
	}
	return estimateTokens(ms)
}
