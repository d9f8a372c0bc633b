package llm

import (
	"context"
	"encoding/json"
)

// Provider streams one model call. It never retries: the session owns all
// retrying, so a failure comes back at once as an error (before the stream
// starts) or as the stream's error event.
type Provider interface {
	Stream(ctx context.Context, req *Request) (*Stream, error)
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Model    Model
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens caps the output; 0 means the model's MaxTokens.
	MaxTokens int
	// Attempt is sent as the x-rally-attempt header: 1 for the first call
	// of a turn, 2 for its first retry, and so on. 0 sends nothing.
	Attempt int
	// Thinking asks a reasoning model to think: "off" (or empty),
	// "minimal", "low", "medium", "high".
	Thinking string
}

// APIDef is one wire format rally speaks, as its provider package exports
// it: the registry (package llm/apis) builds clients, the settings' api
// enum and schema, the CLI's help and the fake LLM's checks from these.
type APIDef struct {
	// Name is the API's name (providers.<name>.api), as pi names it.
	Name string
	// Doc says in a few words what speaks it, for help and the schema.
	Doc string
	// DefaultBaseURL is the API root its client uses when neither the
	// options nor the model name one; "" for an API without a server.
	DefaultBaseURL string
	// New builds a client with the options.
	New func(ClientOptions) Provider
}

// The API names, as in the pi coding agent's model definitions.
const (
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
	APIAnthropicMessages = "anthropic-messages"
	APIGoogle            = "google-generative-ai"
	APISim               = "sim"
)

// ModelCost is a price in US dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model describes a model (the model object of get_state in docs/rpc.md).
type Model struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	BaseURL       string    `json:"baseUrl"`
	Reasoning     bool      `json:"reasoning"`
	Input         []string  `json:"input"`
	ContextWindow int       `json:"contextWindow"`
	MaxTokens     int       `json:"maxTokens"`
	Cost          ModelCost `json:"cost"`
}

// Price fills u.Cost from the model's prices.
func (m *Model) Price(u *Usage) {
	const perM = 1e6
	u.Cost = Cost{
		Input:      float64(u.Input) * m.Cost.Input / perM,
		Output:     float64(u.Output) * m.Cost.Output / perM,
		CacheRead:  float64(u.CacheRead) * m.Cost.CacheRead / perM,
		CacheWrite: float64(u.CacheWrite) * m.Cost.CacheWrite / perM,
	}
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
}

// Overflows reports a silent overflow: a successful call whose input
// (fresh, cached and cache-written) exceeds the model's context window.
func (m *Model) Overflows(u *Usage) bool {
	return m.ContextWindow > 0 && u != nil && u.Input+u.CacheRead+u.CacheWrite > m.ContextWindow
}
