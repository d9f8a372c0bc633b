package llm

// Catalog returns the built-in models, a small list of well-known models for
// the built-in providers. Prices are US dollars per million tokens as
// published by each provider; settings may add models or override these.
func Catalog() []Model {
	text := []string{"text"}
	vision := []string{"text", "image"}
	return []Model{
		{ID: "sim", Name: "rally sim (offline)", API: APISim, Provider: "sim", Input: text, ContextWindow: 128000, MaxTokens: 8192},
		// sim-tiny's window is small enough that a few tool results overflow
		// it, so compaction can be shown offline.
		{ID: "sim-tiny", Name: "rally sim with a 1,500-token window", API: APISim, Provider: "sim", Input: text, ContextWindow: 1500, MaxTokens: 1024},
		{ID: "gpt-4.1", Name: "GPT-4.1", API: APIOpenAICompletions, Provider: "openai", Input: vision, ContextWindow: 1047576, MaxTokens: 32768, Cost: ModelCost{Input: 2, Output: 8, CacheRead: 0.5}},
		{ID: "gpt-4.1-mini", Name: "GPT-4.1 mini", API: APIOpenAICompletions, Provider: "openai", Input: vision, ContextWindow: 1047576, MaxTokens: 32768, Cost: ModelCost{Input: 0.4, Output: 1.6, CacheRead: 0.1}},
		{ID: "gpt-5", Name: "GPT-5", API: APIOpenAIResponses, Provider: "openai", Reasoning: true, Input: vision, ContextWindow: 400000, MaxTokens: 128000, Cost: ModelCost{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", API: APIAnthropicMessages, Provider: "anthropic", Reasoning: true, Input: vision, ContextWindow: 200000, MaxTokens: 64000, Cost: ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", API: APIAnthropicMessages, Provider: "anthropic", Reasoning: true, Input: vision, ContextWindow: 200000, MaxTokens: 64000, Cost: ModelCost{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
		{ID: "gemini-2.5-flash", Name: "Gemini 2.5 Flash", API: APIGoogle, Provider: "google", Reasoning: true, Input: vision, ContextWindow: 1048576, MaxTokens: 65536, Cost: ModelCost{Input: 0.3, Output: 2.5, CacheRead: 0.075}},
		{ID: "gemini-2.5-pro", Name: "Gemini 2.5 Pro", API: APIGoogle, Provider: "google", Reasoning: true, Input: vision, ContextWindow: 1048576, MaxTokens: 65536, Cost: ModelCost{Input: 1.25, Output: 10, CacheRead: 0.31}},
		{ID: "anthropic/claude-sonnet-4.5", Name: "Claude Sonnet 4.5 (OpenRouter)", API: APIOpenAICompletions, Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Reasoning: true, Input: vision, ContextWindow: 1000000, MaxTokens: 64000, Cost: ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		{ID: "llama-3.3-70b-versatile", Name: "Llama 3.3 70B (Groq)", API: APIOpenAICompletions, Provider: "groq", BaseURL: "https://api.groq.com/openai/v1", Input: text, ContextWindow: 131072, MaxTokens: 32768, Cost: ModelCost{Input: 0.59, Output: 0.79}},
	}
}

// Lookup finds a built-in model by provider and id.
func Lookup(provider, id string) (Model, bool) {
	for _, m := range Catalog() {
		if m.Provider == provider && m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}
