package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// Classify gives a failure its class. It reads the signals in the order
// doc.go gives and explains: a size against a context limit first, then an
// explicit x-should-retry header, then typed codes, the families of meaning
// (billing, quota periods, content blocks, missing resources), the status,
// the size of a stated wait, the network taxonomy, and the text fallback
// last; Fatal when nothing matched.
//
// Text is matched after lowercasing and folding whitespace, so a message
// wrapped over lines reads like the original. Classify reads a stated wait
// itself, from relative values only (seconds, durations, "try again in …"),
// so it stays clock-free.
func Classify(f Failure) Verdict {
	ft := parse(f)
	if r := overflow(&ft); r != "" {
		w, n := sizes(&ft)
		return Verdict{Class: ContextOverflow, Reason: r, Window: w, Requested: n, Signal: SignalOverflow}
	}
	if f.Header != nil {
		switch strings.ToLower(strings.TrimSpace(f.Header.Get("x-should-retry"))) {
		case "true":
			if c, r, s := structured(f, &ft); c == UsageLimit {
				return Verdict{Class: c, Reason: r + "; x-should-retry: true", Signal: s}
			}
			return Verdict{Class: Transient, Reason: "x-should-retry: true", Signal: SignalHeader}
		case "false":
			return Verdict{Class: Fatal, Reason: "x-should-retry: false", Signal: SignalHeader}
		}
	}
	if c, r, s := structured(f, &ft); r != "" {
		return Verdict{Class: c, Reason: r, Signal: s}
	}
	if c, r := textual(&ft); r != "" {
		return Verdict{Class: c, Reason: r, Signal: SignalText}
	}
	return Verdict{Class: Fatal, Reason: "unrecognised error", Signal: SignalNone}
}

// overflowCodes are structured codes that mean the request does not fit.
var overflowCodes = []string{
	"context_length_exceeded",
	"model_context_window_exceeded",
	"request_too_large",
	"exceed_context_size_error",
	"context_window_exceeded",
	"string_above_max_length",
	"model_max_prompt_tokens_exceeded", // GitHub Copilot
}

// overflowPhrases are message fragments, one or more per provider family,
// that mean the request does not fit the context window.
var overflowPhrases = dict.list(
	"prompt is too long",                     // Anthropic
	"exceeds the context window",             // OpenAI Responses
	"maximum context length is",              // OpenAI, vLLM, DeepSeek
	"maximum context length of",              //
	"input is too long for requested model",  // Bedrock
	"input is too long",                      // Bedrock variants
	"reduce the length of the messages",      // Groq, OpenAI
	"maximum prompt length is",               // xAI
	"maximum context length",                 // Mistral "… too large for model with N maximum context length"
	"exceeds the available context size",     // llama.cpp
	"greater than the context length",        // LM Studio
	"prompt filled the context window",       // Ollama
	"context window exceeds limit",           // MiniMax
	"context length exceeded",                //
	"context_length_exceeded",                //
	"context size has been exceeded",         // llama.cpp, LM Studio MLX
	"larger than the max context size",       // llama.cpp embedding slots
	"input is too large to process",          // llama.cpp physical batch
	"exceed context window of",               // llama-cpp-python
	"exceeds the context length",             // Ollama
	"context the overflows",                  // LM Studio's own wording
	"context overflow",                       //
	"too many tokens in batch",               // Mistral
	"max_new_tokens` must be <=",             // TGI, Together
	"expected maxlength",                     // Bedrock "Malformed input request"
	"must have length less than or equal to", // Bedrock body size
	"400 status code (no body)",              // OpenAI SDKs
	"413 status code (no body)",              //
	"exceeds the maximum context",            //
	"too many tokens in the prompt",          //
	"400 (no body)",                          // some OpenAI-compatible hosts
	"413 (no body)",                          //
	"exceed context limit",                   // Anthropic and proxies: "input length and `max_tokens` exceed context limit: A + B > C"
	"exceeded model token limit",             // Moonshot/Kimi "Your request exceeded model token limit: N"
	"too long to fit into the model",         // vLLM "The prompt (total length N) is too long to fit into the model (context length M)"
	"request too large (max",                 // client-side payload caps: "Request too large (max 32MB)"
)

// Fragments for the general overflow rule (countOverLimit).
var (
	// comparisons state that something is over a limit.
	comparisons = dict.list("exceed", "too long", "too large", "longer than", "larger than", "greater than", " > ", ">=",
		"length should be", "must have less than", "is not possible")
	// limitNouns name the limit that matters for overflow.
	limitNouns = []string{"context", "prompt", "input", "n_ctx", "token limit", "model length", "sequence length", "message tokens"}
	// sizeNouns say that what is compared is a size in tokens or length.
	sizeNouns = []string{"token", "length"}
	// budgetWords mark a rate or quota budget, which is not the window.
	budgetWords = []string{"per minute", "per min", "tokens per", "per hour", "per day", "rate limit", "tpm", "tpd", "quota", "/min"}
)

func overflow(ft *facts) string {
	for _, c := range ft.codes {
		for _, o := range overflowCodes {
			if c == o {
				return "overflow code " + c
			}
		}
	}
	if p := overflowPhrases.first(&ft.found); p != "" {
		return "overflow: " + strings.TrimSpace(p)
	}
	t := ft.text
	// Gemini: "The input token count (N) exceeds the maximum number of
	// tokens allowed (M)."
	if i := strings.Index(t, "input token count"); i >= 0 && strings.Contains(t[i:], "exceeds the maximum") {
		return "overflow: input token count exceeds the maximum"
	}
	// llama.cpp and LM Studio n_ctx variants: "requested tokens (N) exceed
	// context window of M", "… > n_ctx", "n_keep (N) >= n_ctx (M)".
	if strings.Contains(t, "n_ctx") && hasAny(t, "exceed", "too long", "larger", ">=", "n_keep") {
		return "overflow: n_ctx exceeded"
	}
	// A request larger than the whole tokens-per-minute budget can never
	// succeed by waiting.
	if strings.Contains(t, "request too large") && (strings.Contains(t, "tokens per minute") || strings.Contains(t, "tpm")) {
		return "overflow: request larger than the tokens-per-minute budget"
	}
	// The same on hosts that word it as a rate limit: "Limit 7000, Used 0,
	// Requested ~12903" asks for more than the whole per-minute budget.
	if requestOverBudget(t) {
		return "overflow: request larger than the per-minute budget"
	}
	if countOverLimit(ft) {
		return "overflow: token count over the context limit"
	}
	if ft.status == 413 {
		return "overflow: http 413"
	}
	return ""
}

// countOverLimit is the general overflow rule, for the wordings no list
// names yet: a message that states a size in tokens or length against a
// context, prompt, input or model limit is an overflow, whoever sends it
// ("Input length (N tokens) exceeds the maximum allowed length", "The
// decoder prompt (length N) is longer than the maximum model length of M",
// "Range of input length should be [1, M]", "inputs must have less than M
// tokens"). The size, the comparison and the limit must stand within one
// stretch of text with a number or a "max", and a per-minute or per-day
// budget is a rate limit, not the window.
func countOverLimit(ft *facts) bool {
	if comparisons.first(&ft.found) == "" {
		return false // the common path: nothing is compared with anything
	}
	if billingPhrases.first(&ft.found) != "" {
		return false // a key's or account's token budget, not the window
	}
	const reach = 100
	t := ft.text
	for k, c := range comparisons.words {
		if !ft.found.has(comparisons.ids[k]) {
			continue // the scan saw no such comparison: no need to look for it
		}
		for i := 0; i < len(t); {
			j := strings.Index(t[i:], c)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(c)
			w := t[max(0, at-reach):min(len(t), at+len(c)+reach)]
			if hasAny(w, sizeNouns...) && hasAny(w, limitNouns...) && (hasDigit(w) || strings.Contains(w, "max")) && !hasAny(w, budgetWords...) {
				return true
			}
		}
	}
	return false
}

// requestOverBudget reads a per-minute token limit stated as "Limit L, …
// Requested R" (Groq, OpenAI) and reports whether R alone exceeds L.
func requestOverBudget(t string) bool {
	if !strings.Contains(t, "per minute") && !strings.Contains(t, "per min") {
		return false
	}
	l, ok := numberAfter(t, "limit ")
	if !ok {
		return false
	}
	r, ok := numberAfter(t, "requested ")
	return ok && r > l
}

// numberAfter reads the integer after the first p in t that a number
// follows, allowing a "~" and thousands separators ("~12903", "20,000").
func numberAfter(t, p string) (int64, bool) {
	for i := 0; ; {
		j := strings.Index(t[i:], p)
		if j < 0 {
			return 0, false
		}
		i += j + len(p)
		s := strings.TrimLeft(t[i:], "~: ")
		var n int64
		digits := 0
	scan:
		for k := 0; k < len(s) && digits < 15; k++ {
			switch c := s[k]; {
			case '0' <= c && c <= '9':
				n = n*10 + int64(c-'0')
				digits++
			case c == ',' && digits > 0 && k+1 < len(s) && '0' <= s[k+1] && s[k+1] <= '9':
			default:
				break scan
			}
		}
		if digits > 0 {
			return n, true
		}
	}
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			return true
		}
	}
	return false
}

// Structured codes, lowercased.
var (
	billingCodes = []string{
		"insufficient_quota", "billing_hard_limit_reached", "insufficient_balance",
		"billing_not_active", "payment_required", "insufficient_credits", "billing_error",
	}
	usageCodes = []string{
		"usage_limit_reached", "usage_limit_exceeded", "daily_limit_exceeded",
		"quota_exceeded_daily", "usage_not_included",
		"quota_exceeded", // GitHub Copilot's 402 "You have no quota"
	}
	transientCodes = []string{
		"overloaded_error", "overloaded", "rate_limit_error", "rate_limit_exceeded",
		"rate_limit", "resource_exhausted", "unavailable", "internal", "deadline_exceeded",
		"throttlingexception", "throttling", "servicequotaexceededexception",
		"serviceunavailableexception", "modeltimeoutexception", "internalserverexception",
		"modelnotreadyexception", "server_error", "api_error", "timeout", "service_unavailable",
		"engine_overloaded", "too_many_requests", "internal_server_error", "slow_down",
		"aborted", "rate_limited",
		// Node's error codes, when a client serialised the error object.
		"econnreset", "econnrefused", "etimedout", "epipe", "eai_again", "enotfound",
	}
	fatalCodes = []string{
		"authentication_error", "permission_error", "invalid_request_error",
		"not_found_error", "invalid_api_key", "model_not_found", "invalid_argument",
		"permission_denied", "unauthenticated", "not_found", "validationexception",
		"accessdeniedexception", "resourcenotfoundexception", "unrecognizedclientexception",
		"content_filter", "content_policy_violation", "failed_precondition",
		"invalid_prompt", "unsupported_country_region_territory", "account_deactivated",
	}
)

func hasCode(ft *facts, set []string) string {
	for _, c := range ft.codes {
		for _, s := range set {
			if c == s {
				return c
			}
		}
	}
	return ""
}

func structured(f Failure, ft *facts) (Class, string, Signal) {
	if c := hasCode(ft, billingCodes); c != "" {
		return Fatal, "billing: " + c, SignalCode
	}
	// A plan quota sent as 402 (GitHub Copilot's quota_exceeded) resets with
	// the plan period; it is a usage limit, not an empty account.
	if c := hasCode(ft, usageCodes); c != "" {
		return UsageLimit, "usage limit: " + c, SignalCode
	}
	if ft.status == 402 {
		return Fatal, "billing: http 402", SignalStatus
	}
	if isBilling(f.Provider, ft) {
		return Fatal, "billing: out of credit", SignalFamily
	}
	// A cause no wait can fix, under whatever status it arrives: a proxy's
	// 429 around a content block, a 500 for a model that does not fit the
	// machine, a 502 from a route that does not exist.
	if r := fatalCause(ft); r != "" {
		return Fatal, "fatal: " + r, SignalFamily
	}
	limited := ft.status == 429 || hasCode(ft, transientCodes) != "" || rateWords(ft)
	if limited || ft.status == 0 || ft.status >= 500 {
		// A quota by the day, the plan or the free tier is a usage limit
		// whatever status carries it (g4f sends its daily cap as a 500).
		if r := longQuota(ft); r != "" && (limited || hasAny(ft.text, limitWords...)) {
			return UsageLimit, "usage limit: " + r, SignalFamily
		}
	}
	// By magnitude: a limit whose stated wait is an hour or more is a plan
	// or daily quota, whatever its wording ("retry after 86400 seconds",
	// "your quota will reset after 27h41m36s").
	if limited && statedWait(f, ft) >= LongWait {
		return UsageLimit, "usage limit: stated wait of an hour or more", SignalWait
	}
	if c := hasCode(ft, transientCodes); c != "" {
		return Transient, "transient: " + c, SignalCode
	}
	switch s := ft.status; {
	case s == 408 || s == 409 || s == 425 || s == 429:
		return Transient, "transient: http " + itoa(s), SignalStatus
	case s >= 500 && s <= 599:
		return Transient, "transient: http " + itoa(s), SignalStatus
	}
	if c, r := transport(f.Err); r != "" {
		return c, r, SignalNetwork
	}
	// Some providers send capacity trouble as a bad request (Mistral's
	// "Service tier capacity exceeded" is an invalid_request_error).
	if p := capacityPhrases.first(&ft.found); p != "" && ft.status != 401 && ft.status != 403 {
		return Transient, "transient: " + p, SignalFamily
	}
	if c := hasCode(ft, fatalCodes); c != "" {
		return Fatal, "fatal: " + c, SignalCode
	}
	if s := ft.status; s >= 400 && s <= 499 {
		return Fatal, "fatal: http " + itoa(s), SignalStatus
	}
	if p := networkPhrases.first(&ft.found); p != "" {
		return Transient, "transient: network " + p, SignalNetwork
	}
	if p := serverFault.first(&ft.found); p != "" {
		return Transient, "transient: server fault: " + p, SignalFamily
	}
	if p := rateLimited.first(&ft.found); p != "" && !strings.Contains(ft.text, "quota") {
		return Transient, "transient: rate limited: " + p, SignalFamily
	}
	// A message that states a wait asks to be retried: "Please wait 8s",
	// "Come back in 3h 47m" (an hour or more is a usage limit).
	if d := statedWait(f, ft); d > 0 {
		if d >= LongWait {
			return UsageLimit, "usage limit: stated wait of an hour or more", SignalWait
		}
		return Transient, "transient: stated wait", SignalWait
	}
	return Fatal, "", SignalNone
}

// LongWait is the stated wait from which a rate limit is read as a usage
// limit: per-minute and per-second limits state waits of seconds, plan and
// daily quotas state hours.
const LongWait = time.Hour

// statedWait is the wait the failure states in relative terms: Hint with no
// clock, so that absolute times (HTTP dates, epochs, "resets at …") do not
// count and Classify stays clock-free. It is only computed for rate limits.
func statedWait(f Failure, ft *facts) time.Duration {
	if d := headerHint(f.Header, time.Time{}); d > 0 {
		return d
	}
	return bodyHint(*ft, time.Time{})
}

// isBilling reports an account that is out of money, which waiting never
// fixes. OpenAI says "You exceeded your current quota, please check your
// plan and billing details" for it, while Gemini uses the same first words
// for a per-minute quota: so the quota sentence is billing only with a
// billing word or at OpenAI-shaped providers.
func isBilling(provider string, ft *facts) bool {
	t := ft.text
	if billingPhrases.first(&ft.found) != "" {
		return true
	}
	if strings.Contains(t, "exceeded your current quota") || strings.Contains(t, "check your plan and billing details") {
		return hasCode(ft, []string{"resource_exhausted"}) == "" && quotaMeansBilling(provider)
	}
	return false
}

// quotaMeansBilling reports whether "You exceeded your current quota,
// please check your plan and billing details" means an empty account at
// this provider. OpenAI (and Azure, and Codex) use it for billing; Gemini
// and Alibaba's Qwen copied the sentence for per-minute throttling. An
// unknown provider is read the OpenAI way, whose wording it is.
func quotaMeansBilling(provider string) bool {
	switch strings.ToLower(provider) {
	case "", "openai", "azure", "azure-openai", "codex", "openai-responses", "openai-completions":
		return true
	}
	return false
}

var billingPhrases = dict.list(
	"credit balance is too low", "insufficient balance", "insufficient_balance",
	"insufficient credits", "out of credits", "billing hard limit",
	"payment required", "add more credits", "purchase more credits",
	"requires more credits", "your account is not active", "spending limit",
	"used all available credits", "prompt tokens limit exceeded",
	"余额不足", // Zhipu: "insufficient balance"
)

// transport classifies Go errors by type.
func transport(err error) (Class, string) {
	if err == nil {
		return Fatal, ""
	}
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, context.Canceled):
		// An abort is not an error class; it is never retried.
		return Fatal, "cancelled"
	case errors.As(err, &certErr), errors.As(err, &unkAuth), errors.As(err, &hostErr):
		return Fatal, "fatal: tls certificate"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return Fatal, "fatal: no such host"
		}
		return Transient, "transient: dns"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ENETDOWN):
		return Transient, "transient: network"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Transient, "transient: connection closed early"
	case errors.Is(err, context.DeadlineExceeded):
		return Transient, "transient: timeout"
	case errors.As(err, &netErr) && netErr.Timeout():
		return Transient, "transient: timeout"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return Transient, "transient: network"
	}
	return Fatal, ""
}

func itoa(n int) string {
	var b [8]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

var capacityPhrases = dict.list("overloaded", "capacity exceeded", "at capacity", "over capacity")
