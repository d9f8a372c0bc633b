package llmtest

import (
	"net/http"
	"strconv"
	"time"
)

// errSpec is one built-in error in one provider's shape. The texts follow
// the providers' real messages, so that rally's classifier meets here
// what it meets in production.
type errSpec struct {
	kind    ErrorKind
	status  int
	typ     string // OpenAI and Anthropic error.type; Gemini error.status
	code    string // OpenAI error.code ("" is null)
	param   string // OpenAI error.param ("" is null)
	message string
	header  http.Header
	details []any // Gemini error.details
	fields  obj   // replaces OpenAI's error object when set
}

// usageReset is when the built-in usage limits say they reset: longer than
// rally's default maxDelayMs (60 s), so it has to switch or fail fast.
const usageReset = 5 * time.Minute

// resetSecs is the reset in whole seconds, rounded up: a client that
// waits what it is told is never early.
func (r *reply) resetSecs() int { return int((r.reset + time.Second - 1) / time.Second) }

// kindFor picks a body for an HTTP fault that gave only a status.
func kindFor(status int) ErrorKind {
	switch {
	case status == 429:
		return RateLimited
	case status == 503 || status == 529:
		return Overloaded
	case status >= 500:
		return ServerError
	case status == 401 || status == 403:
		return Auth
	case status == 404:
		return NotFound
	case status == 413:
		return Overflow
	}
	return BadRequest
}

func builtin(api API, kind ErrorKind, r *reply, cred string) errSpec {
	e := api.wire().apiError(kind, r, cred)
	e.kind = kind
	if e.header == nil {
		e.header = http.Header{}
	}
	return e
}

// Each writer answers with its provider's errors; the two OpenAI APIs
// share theirs and differ in a few.
func (chatWire) apiError(k ErrorKind, r *reply, cred string) errSpec {
	return openaiError(OpenAICompletions, k, r, cred)
}

func (responsesWire) apiError(k ErrorKind, r *reply, cred string) errSpec {
	return openaiError(OpenAIResponses, k, r, cred)
}

func (anthropicWire) apiError(k ErrorKind, r *reply, _ string) errSpec { return anthropicError(k, r) }
func (geminiWire) apiError(k ErrorKind, r *reply, _ string) errSpec    { return geminiError(k, r) }

func openaiError(api API, kind ErrorKind, r *reply, cred string) errSpec {
	const limits = " Visit https://platform.openai.com/account/rate-limits to learn more."
	switch kind {
	case Overloaded:
		e := errSpec{status: 503, typ: "server_error",
			message: "That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists."}
		if api == OpenAIResponses {
			e.code, e.message = "server_error", "Our servers are currently overloaded. Please try again later."
		}
		return e
	case RateLimited:
		return errSpec{status: 429, typ: "requests", code: "rate_limit_exceeded",
			message: "Rate limit reached for " + r.model + " in organization org-llmtest on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s." + limits,
			header: http.Header{
				"X-Ratelimit-Limit-Requests":     {"3"},
				"X-Ratelimit-Remaining-Requests": {"0"},
				"X-Ratelimit-Reset-Requests":     {"1s"},
			}}
	case UsageLimit:
		if api == OpenAIResponses {
			// The ChatGPT-plan (Codex) shape: a typed plan cap with its reset.
			secs := r.resetSecs()
			return errSpec{status: 429, typ: "usage_limit_reached", code: "usage_limit_reached",
				message: "The usage limit has been reached", fields: obj{
					{"type", "usage_limit_reached"},
					{"message", "The usage limit has been reached"},
					{"plan_type", "plus"},
					{"resets_at", r.now.Add(r.reset).Unix()},
					{"resets_in_seconds", secs},
				}}
		}
		return errSpec{status: 429, typ: "tokens", code: "rate_limit_exceeded",
			message: "Rate limit reached for " + r.model + " in organization org-llmtest on tokens per day (TPD): Limit 2000000, Used 1999800, Requested 1200. Please try again in " + (time.Duration(r.resetSecs()) * time.Second).String() + "." + limits}
	case Overflow:
		if api == OpenAIResponses {
			return errSpec{status: 400, typ: "invalid_request_error", code: "context_length_exceeded", param: "input",
				message: "Your input exceeds the context window of this model. Please adjust your input and try again."}
		}
		return errSpec{status: 400, typ: "invalid_request_error", code: "context_length_exceeded", param: "messages",
			message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."}
	case Auth:
		shown := cred
		if shown == "" {
			shown = "(none)"
		}
		return errSpec{status: 401, typ: "invalid_request_error", code: "invalid_api_key",
			message: "Incorrect API key provided: " + shown + ". You can find your API key at https://platform.openai.com/account/api-keys."}
	case NotFound:
		return errSpec{status: 404, typ: "invalid_request_error", code: "model_not_found",
			message: "The model `" + r.model + "` does not exist or you do not have access to it."}
	case ServerError:
		return errSpec{status: 500, typ: "server_error",
			message: "The server had an error while processing your request. Sorry about that!"}
	}
	return errSpec{status: 400, typ: "invalid_request_error", code: "invalid_type", param: "temperature",
		message: "Invalid type for 'temperature': expected a decimal, but got a string instead."}
}

func anthropicError(kind ErrorKind, r *reply) errSpec {
	const sales = " You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
	switch kind {
	case Overloaded:
		return errSpec{status: 529, typ: "overloaded_error", message: "Overloaded"}
	case RateLimited:
		return errSpec{status: 429, typ: "rate_limit_error",
			message: "This request would exceed the rate limit for your organization (llmtest-org) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later." + sales,
			header: http.Header{
				"Retry-After":                            {"1"},
				"Anthropic-Ratelimit-Requests-Limit":     {"50"},
				"Anthropic-Ratelimit-Requests-Remaining": {"0"},
				"Anthropic-Ratelimit-Requests-Reset":     {r.now.Add(time.Second).UTC().Format(time.RFC3339)},
			}}
	case UsageLimit:
		return errSpec{status: 429, typ: "rate_limit_error",
			message: "Number of request tokens has exceeded your daily rate limit (https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later." + sales,
			header: http.Header{
				"Retry-After":                          {strconv.Itoa(r.resetSecs())},
				"Anthropic-Ratelimit-Tokens-Limit":     {"1000000"},
				"Anthropic-Ratelimit-Tokens-Remaining": {"0"},
				"Anthropic-Ratelimit-Tokens-Reset":     {r.now.Add(r.reset).UTC().Format(time.RFC3339)},
			}}
	case Overflow:
		return errSpec{status: 400, typ: "invalid_request_error", message: "prompt is too long: 215304 tokens > 200000 maximum"}
	case Auth:
		return errSpec{status: 401, typ: "authentication_error", message: "invalid x-api-key"}
	case NotFound:
		return errSpec{status: 404, typ: "not_found_error", message: "model: " + r.model}
	case ServerError:
		return errSpec{status: 500, typ: "api_error", message: "Internal server error"}
	}
	return errSpec{status: 400, typ: "invalid_request_error", message: "max_tokens: Field required"}
}

func geminiError(kind ErrorKind, r *reply) errSpec {
	quota := func(id, limit, delay string) []any {
		return []any{
			obj{{"@type", "type.googleapis.com/google.rpc.QuotaFailure"}, {"violations", []any{obj{
				{"quotaMetric", "generativelanguage.googleapis.com/generate_content_free_tier_requests"},
				{"quotaId", id},
				{"quotaDimensions", obj{{"location", "global"}, {"model", r.model}}},
				{"quotaValue", limit},
			}}}},
			obj{{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", delay}},
		}
	}
	const exceeded = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: "
	switch kind {
	case Overloaded:
		return errSpec{status: 503, typ: "UNAVAILABLE", message: "The model is overloaded. Please try again later."}
	case RateLimited:
		return errSpec{status: 429, typ: "RESOURCE_EXHAUSTED",
			message: exceeded + "10, model: " + r.model + "\nPlease retry in 1s.",
			details: quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10", "1s")}
	case UsageLimit:
		secs := strconv.Itoa(r.resetSecs()) + "s"
		return errSpec{status: 429, typ: "RESOURCE_EXHAUSTED",
			message: exceeded + "250, model: " + r.model + "\nPlease retry in " + secs + ".",
			details: quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250", secs)}
	case Overflow:
		return errSpec{status: 400, typ: "INVALID_ARGUMENT",
			message: "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."}
	case Auth:
		return errSpec{status: 400, typ: "INVALID_ARGUMENT", message: "API key not valid. Please pass a valid API key.",
			details: []any{obj{
				{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
				{"reason", "API_KEY_INVALID"},
				{"domain", "googleapis.com"},
				{"metadata", obj{{"service", "generativelanguage.googleapis.com"}}},
			}}}
	case NotFound:
		return errSpec{status: 404, typ: "NOT_FOUND",
			message: "models/" + r.model + " is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."}
	case ServerError:
		return errSpec{status: 500, typ: "INTERNAL",
			message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}
	}
	return errSpec{status: 400, typ: "INVALID_ARGUMENT",
		message: "Invalid JSON payload received. Unknown name \"temprature\" at 'generation_config': Cannot find field.",
		details: []any{obj{
			{"@type", "type.googleapis.com/google.rpc.BadRequest"},
			{"fieldViolations", []any{obj{
				{"field", "generation_config"},
				{"description", "Invalid JSON payload received. Unknown name \"temprature\" at 'generation_config': Cannot find field."},
			}}},
		}}}
}

// openaiObject is the OpenAI error object: {message, type, param, code}.
func openaiObject(e errSpec) obj {
	if e.fields != nil {
		return e.fields
	}
	return obj{{"message", e.message}, {"type", e.typ}, {"param", nullable(e.param)}, {"code", nullable(e.code)}}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
