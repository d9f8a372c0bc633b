package retry

import "strings"

// transientPhrases are lowercased fragments that mean time may fix it, for
// errors that exist only as text (a stored session, a provider that puts
// everything in a string, a proxy's message).
var transientPhrases = dict.list(
	"capacity", "terminated", "stream error", "try again later", "please retry", "retry in",
	"retry after", "try again in", "retrydelay", "unavailable", "no response", "stream ended",
	"stream closed", "unexpected end of json input", "finish_reason: error",
	"you can retry your request", "try your request again", "stream ended before",
	"please retry your request", "retry your request", "timeout",
	"请稍后再试", "稍后重试", // "please try again later"
)

// statusWords are HTTP statuses that mean a transient failure when they
// stand as a word in a message.
var statusWords = []string{"429", "500", "502", "503", "504", "524", "529", "408"}

// textual is the last resort: the message alone.
func textual(ft *facts) (Class, string) {
	t := ft.text
	if strings.Contains(t, "exceeded your current quota") || strings.Contains(t, "quota exceeded") || strings.Contains(t, "exceeded your quota") {
		if isLongQuota(ft) {
			return UsageLimit, "usage limit: quota text"
		}
		return Transient, "transient: quota text"
	}
	if isLongQuota(ft) && hasAny(t, "limit", "quota", "too many", "exceeded", "throttl") {
		return UsageLimit, "usage limit: text"
	}
	if p := rateLimited.first(&ft.found); p != "" {
		return Transient, "transient: text " + p
	}
	if p := transientPhrases.first(&ft.found); p != "" {
		return Transient, "transient: text " + p
	}
	for _, w := range statusWords {
		if hasStatusWord(t, w) {
			return Transient, "transient: status word " + w
		}
	}
	return Fatal, ""
}

// hasStatusWord reports whether the status code w stands alone in t: not
// part of a longer number or identifier ("5000", "req_502ab"), and not a
// count ("500 tokens").
func hasStatusWord(t, w string) bool {
	for i := 0; ; {
		j := strings.Index(t[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		i = end
		if start > 0 && (isWordByte(t[start-1]) || t[start-1] == '-' || t[start-1] == '.') {
			continue
		}
		if end < len(t) && (isWordByte(t[end]) || t[end] == '-' || (t[end] == '.' && end+1 < len(t) && isWordByte(t[end+1]))) {
			continue
		}
		rest := strings.TrimLeft(t[end:], " ")
		if hasAnyPrefix(rest, "tokens", "token", "ms", "milliseconds", "seconds", "characters", "chars", "bytes", "requests", "words", "lines", "items") {
			continue
		}
		return true
	}
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAny(s string, subs ...string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
