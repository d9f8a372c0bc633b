package retry

import "strings"

// transientPhrases are lowercased fragments that mean time may fix it, for
// errors that exist only as text (a stored session, a provider that puts
// everything in a string, a proxy's message).
var transientPhrases = dict.list(
	"overloaded", "rate limit", "ratelimit", "rate-limit", "too many requests",
	"service unavailable", "server error", "internal error", "bad gateway",
	"gateway timeout", "temporarily unavailable", "server is busy", "capacity",
	"connection error", "connection refused", "connection reset", "connection lost",
	"connection closed", "connection aborted", "fetch failed", "socket hang up",
	"other side closed", "upstream connect", "reset before headers", "terminated",
	"econnreset", "econnrefused", "etimedout", "epipe", "broken pipe",
	"network error", "unexpected eof", "goaway", "stream error", "internal_error",
	"refused_stream", "tls handshake timeout", "i/o timeout", "timed out", "timeout",
	"try again later", "please retry", "retry in", "retry after", "try again in",
	"retrydelay", "throttl", "unavailable", "resource exhausted", "resource_exhausted",
	"no response", "server disconnected", "premature close", "stream ended", "stream closed",
	"deadline exceeded", "stream disconnected", "unexpected end of json input",
	"finish_reason: error", "you can retry your request", "error occurred while processing",
	"unexpected error during processing", "try your request again", "unable to process your request",
	"no slots available", "llm busy", "server busy", "actively refused", "too quickly",
	"error sending request", "error decoding response body",
	// Node, Bun and Python clients' words for a dropped connection, DNS
	// trouble, gRPC throttling (NVIDIA NIM).
	"socket connection was closed", "peer closed connection", "incomplete chunked read",
	"getaddrinfo", "enotfound", "eai_again", "resourceexhausted",
	"stream ended before", "please retry your request", "timeout occurred",
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
