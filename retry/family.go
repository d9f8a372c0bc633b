package retry

import "strings"

// The families of meaning: what an engineer reads in an error's words
// whatever provider, proxy or client printed it. Each family is a list of
// phrases found by the one-pass dictionary scan, plus the few rules that
// need a position (a negation, a number) and so look at the text itself.

// Causes no wait can fix, whatever status carries them.
var (
	contentBlock = dict.list(
		"blockedreason", "prohibited_content", "prohibitedcontent", // Gemini's prompt feedback, as proxies print it
		"candidate was blocked", "blocked due to safety",
		"content exists risk",                            // DeepSeek
		"datainspectionfailed", "data_inspection_failed", // DashScope (Qwen)
		"may contain inappropriate content", //
		"inappropriate content",             //
	)
	missingResource = dict.list(
		"try pulling it first",                     // Ollama
		"items are not persisted",                  // OpenAI Responses, store=false
		"does not exist or you do not have access", // OpenAI-compatible model_not_found
		"has been decommissioned",                  // Groq
		"cannot post /", "cannot get /",            // an Express proxy with no such route
	)
	badCertificate = dict.list(
		"x509: certificate", "certificate signed by unknown authority", "failed to verify certificate",
		"certificate_verify_failed", "certificate verify failed", "self-signed certificate",
		"self signed certificate", "unable to get local issuer certificate", "certificate has expired",
	)
	noAccess = dict.list(
		"access is denied", "access denied", "not authorized to perform", "permission denied",
	)
	tooSmall = dict.list(
		"requires more system memory",   // Ollama
		"insufficient system resources", // LM Studio
		"not enough resources to load",  //
	)
)

// fatalCause names a cause no wait can fix, or "".
func fatalCause(ft *facts) string {
	if p := contentBlock.first(&ft.found); p != "" {
		return "content blocked: " + p
	}
	if p := badCertificate.first(&ft.found); p != "" {
		return "tls certificate: " + p
	}
	if p := noAccess.first(&ft.found); p != "" {
		return "no access: " + p
	}
	if p := tooSmall.first(&ft.found); p != "" {
		return "machine too small for the model: " + p
	}
	if p := missingResource.first(&ft.found); p != "" {
		return "missing: " + p
	}
	// "model 'llama2' not found", "Item with id 'rs_…' not found": a named
	// model or item that is not there.
	if t := ft.text; strings.Contains(t, "not found") && hasAny(t, "model '", "model \"", "model `", "item with id") {
		return "missing: model or item not found"
	}
	return ""
}

// Quotas by period. A rate per minute is waited out; a quota by the day,
// the plan or the free tier is not.
var (
	longQuotaPhrases = dict.list(
		"usage limit", "per day", "tokens per day", "requests per day", "(tpd)", "(rpd)",
		"daily limit", "daily quota", "daily rate limit", "per-day", "monthly limit",
		"weekly limit", "plan limit", "subscription limit", "perday", "fair usage policy",
		"extra usage is required", "allocated quota exceeded",
		// Subscription clients render their plan windows as text: Claude Code
		// "You've hit your limit · resets 4:50am (Europe/Rome)" and "… session
		// limit …", Gemini CLI "Access resets at 10:57 PM GMT-3", GitHub
		// Copilot "you have exceeded your Copilot token usage".
		"hit your limit", "hit your session limit", "hit your weekly limit",
		"limits will reset at", "access resets at", "exceeded your copilot token usage",
		"premium request allowance",
		// Free tiers and days without the word quota: Workers AI's "daily free
		// allocation", Freebuff's "today's free usage", "individual quota".
		"today's free", "today’s free", "free allocation", "free usage", "daily free",
		"individual quota", "per month", "monthly quota", "weekly quota",
		"使用上限", // Zhipu/Z.ai "已达到 5 小时的使用上限" (the 5-hour usage cap is reached)
	)
	// limitWords say that a limit was hit, as opposed to describing a plan.
	limitWords = []string{"limit", "quota", "too many", "exceeded", "throttl", "used up", "used all", "reached", "上限", "限额"}
	// rateLimited are the words of a rate limit, for errors without a 429.
	rateLimited = dict.list("rate limit", "rate-limit", "ratelimit", "rate limited", "too many requests",
		"throttl", "resource exhausted", "resource_exhausted", "resourceexhausted", "too quickly",
		"请求过于频繁") // "requests too frequent"
)

// rateWords reports a failure worded as a rate limit.
func rateWords(ft *facts) bool { return rateLimited.first(&ft.found) != "" }

// longQuota names a quota that resets on a scale of hours to days, or "":
// a per-day quota id, or a period phrase that no "not" denies
// ("temporarily limiting requests (not your usage limit)").
func longQuota(ft *facts) string {
	for _, q := range ft.quotas {
		if strings.Contains(q, "perday") || strings.Contains(q, "per_day") || strings.Contains(q, "daily") {
			return "long-period quota"
		}
	}
	if longQuotaPhrases.first(&ft.found) != "" && longQuotaPhrases.affirmed(&ft.found, ft.text) {
		return "long-period quota"
	}
	return ""
}

func isLongQuota(ft *facts) bool { return longQuota(ft) != "" }

// affirmed reports whether some phrase of the list that f holds occurs in t
// at least once without a negation just before it.
func (p *phrases) affirmed(f *found, t string) bool {
	for i, id := range p.ids {
		if !f.has(id) {
			continue
		}
		w := p.words[i]
		for at := 0; ; {
			j := strings.Index(t[at:], w)
			if j < 0 {
				break
			}
			if !negated(t, at+j) {
				return true
			}
			at += j + len(w)
		}
	}
	return false
}

// negated reports a "not" or "n't" in the few words before t[at:].
func negated(t string, at int) bool {
	pre := t[max(0, at-12):at]
	return strings.Contains(pre, "not ") || strings.Contains(pre, "n't ")
}

// The network taxonomy: dropped, refused, reset and timed-out connections
// as Go, Node, Bun, Python, Rust and Windows clients and the common proxies
// print them, for failures that arrive as text (a stored session, a
// gateway's message, an SDK's string).
var networkPhrases = dict.list(
	"connection error", "connection refused", "connection reset", "connection lost",
	"connection closed", "connection aborted", "fetch failed", "socket hang up",
	"other side closed", "upstream connect", "reset before headers", "econnreset",
	"econnrefused", "etimedout", "econnaborted", "epipe", "broken pipe", "network error",
	"unexpected eof", "goaway", "refused_stream", "tls handshake timeout", "i/o timeout",
	"timed out", "deadline exceeded", "server disconnected", "premature close",
	"actively refused", "error sending request", "error decoding response body",
	"stream disconnected",
	// Node and Bun.
	"socket connection was closed", "und_err_socket", "connect timeout error",
	"headers timeout error", "body timeout error", "aborted due to timeout",
	"getaddrinfo", "enotfound", "eai_again",
	// Python: requests, urllib3, httpx, the OpenAI SDK.
	"peer closed connection", "incomplete chunked read", "max retries exceeded with url",
	"failed to establish a new connection", "newconnectionerror", "ssleoferror",
	"unexpected_eof_while_reading", "eof occurred in violation of protocol",
	"remotedisconnected", "remote end closed connection", "apiconnectionerror",
	"apitimeouterror",
	// Go's net/http and http2.
	"http2: response body closed", "http2: client connection lost",
	"use of closed network connection",
	// Rust: reqwest and hyper.
	"reqwest::error", "source: timedout",
	// Windows sockets.
	"wsarecv", "wsasend", "forcibly closed by the remote host", "connectex",
	"no connection could be made",
)

// serverFault are the words of a fault on the server's side, which time
// fixes: overload, capacity, an internal error, a gateway in trouble.
var serverFault = dict.list(
	"overloaded", "service unavailable", "server error", "internal error", "bad gateway",
	"gateway timeout", "temporarily unavailable", "server is busy", "server busy", "llm busy",
	"no slots available", "internal_error", "error occurred while processing",
	"unexpected error during processing", "unable to process your request",
	"server had an error", // OpenAI realtime server_error frames
	"high demand", "timeout occurred",
	"负载已饱和", // "the load is saturated"
)
