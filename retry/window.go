package retry

import "strings"

// Sizes an overflow error states, read by Classify next to the overflow
// rule so that one inspection of a failure says both what it is and how
// big the window was. Providers state the window in a dozen wordings; only
// token counts of the context count: a per-minute budget ("Limit 6000,
// Requested 14810" on tokens per minute) or a byte cap ("max 32MB") is not
// a window, and a number outside [minWindow, maxWindow] is not trusted.
const (
	minWindow = 256
	maxWindow = 1 << 30
)

// windowAfter are phrases the window's size follows ("maximum context
// length is 8192 tokens", "context length of only 2048", "(context length
// 4096)", "n_ctx (7424)", "limit of 64000"), in the order they are tried.
var windowAfter = []string{
	"maximum context length is",          // OpenAI, vLLM, DeepSeek, OpenRouter, Azure
	"maximum prompt length is",           // xAI
	"context length of only",             // LM Studio
	"context length of",                  //
	"(context length",                    // vLLM "too long to fit into the model (context length N)"
	"context length (",                   // SGLang "the model's context length (N tokens)"
	"available context size (",           // llama.cpp "exceeds the available context size (N tokens)"
	"context window of",                  // llama-cpp-python, MLX servers "max context window of N"
	"maximum number of tokens allowed (", // Gemini
	"maximum allowed length (",           // SGLang
	"model token limit:",                 // Moonshot/Kimi
	"n_ctx (",                            // LM Studio "n_keep (N) >= n_ctx (M)"
	"n_ctx:",                             // llama.cpp server logs
	"exceeds the limit of",               // GitHub Copilot
	"exceeds limit of",                   // vLLM
	"safe limit (",                       // MLX batch servers
	"must be <=",                         // TGI, Together "`inputs` tokens + `max_new_tokens` must be <= N"
	"maximum model length of",            // vLLM "longer than the maximum model length of N"
	"sequence length is just",            // SambaNova
	"should be [1,",                      // DashScope "Range of input length should be [1, N]"
	"must have less than",                // TEI "inputs must have less than N tokens"
}

// windowBefore are phrases the window's size precedes: Anthropic's "N
// tokens > M maximum", Mistral's "too large for model with N maximum
// context length".
var windowBefore = []string{"maximum context length", "maximum"}

// requestedAfter are phrases the request's input size follows, most
// specific first: "(7554 in the messages, …)" is the input of "you
// requested 8554 tokens", which counts the completion too.
var requestedAfter = []string{
	"your messages resulted in", // OpenAI
	"your request has",          // vLLM "your request has 2778 input tokens"
	"the request contains",      // xAI
	"prompt is too long:",       // Anthropic
	"input token count (",       // Gemini
	"prompt token count of",     // GitHub Copilot
	"input length (",            // SGLang
	"the input (",               // SGLang
	"prompt too long:",          // MLX servers
	"request (",                 // llama.cpp "request (N tokens) exceeds …"
	"requested tokens (",        // llama-cpp-python
	"total length",              // vLLM "The prompt (total length N)"
	"input prompt (",            // vLLM
	"prompt contains at least",  // vLLM "your prompt contains at least N input tokens"
	"prompt contains",           // Mistral
	"keep the first",            // LM Studio "Trying to keep the first N tokens"
	"n_keep (",                  // LM Studio
	"total prompt tokens (",     // MLX batch servers
	"given:",                    // TGI, Together "Given: 2019 `inputs` tokens"
	"tokens (",                  // "you requested 8554 tokens (7554 in the messages, …)"
	"decoder prompt (length",    // vLLM
	"the provided prompt is",    // SambaNova "The provided prompt is N tokens long"
	"you requested about",       // OpenRouter, when it names no split
	"you requested",             //
}

// sizes reads the window and the request's input size an overflow error
// states; 0 for what it does not state.
func sizes(ft *facts) (window, requested int) {
	t := ft.text
	if hasAny(t, budgetWords...) || strings.Contains(t, "request too large (max") {
		// A budget or a byte cap: whatever number it names is not the
		// context window.
		return 0, 0
	}
	// "… exceed context limit: A + B > C": C is the window, A the input.
	if i := strings.Index(t, "exceed context limit:"); i >= 0 {
		rest := t[i:]
		a, okA := numberAfter(rest, "limit:")
		if j := strings.Index(rest, " > "); j >= 0 {
			if c, ok := numberAfter(rest[j:], " > "); ok && plausible(c) {
				window = int(c)
			}
		}
		if okA {
			requested = int(a)
		}
		return window, requested
	}
	if ft.nCtx > 0 && plausible(int64(ft.nCtx)) {
		window = ft.nCtx
	}
	for _, p := range windowAfter {
		if window != 0 {
			break
		}
		if n, ok := numberAfter(t, p); ok && plausible(n) {
			window = int(n)
		}
	}
	for _, p := range windowBefore {
		if window != 0 {
			break
		}
		if n, ok := numberBefore(t, p); ok && plausible(n) {
			window = int(n)
		}
	}
	if ft.nPrompt > 0 {
		requested = ft.nPrompt
	}
	for _, p := range requestedAfter {
		if requested != 0 {
			break
		}
		if n, ok := numberAfter(t, p); ok && n > 0 && n < maxWindow*16 {
			requested = int(n)
		}
	}
	return window, requested
}

func plausible(n int64) bool { return n >= minWindow && n <= maxWindow }

// PlausibleWindow reports whether n can be a context window: what an
// overflow error is trusted to state, and so what a learned window read
// back from a store (a file, a fleet's Redis) must be to be used.
func PlausibleWindow(n int) bool { return plausible(int64(n)) }

// numberBefore reads the integer that ends just before an occurrence of p
// (one space apart), the first occurrence that has one.
func numberBefore(t, p string) (int64, bool) {
	for i := 0; ; {
		j := strings.Index(t[i:], p)
		if j < 0 {
			return 0, false
		}
		at := i + j
		i = at + len(p)
		k := at
		for k > 0 && t[k-1] == ' ' {
			k--
		}
		end := k
		for k > 0 && ('0' <= t[k-1] && t[k-1] <= '9' || t[k-1] == ',') {
			k--
		}
		if k == end || end-k > 15 {
			continue
		}
		var n int64
		for _, c := range []byte(t[k:end]) {
			if c != ',' {
				n = n*10 + int64(c-'0')
			}
		}
		return n, true
	}
}
