package openai_test

import (
	"fmt"
	"os"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
)

// The README's "Provider clients" example: every client embeds
// llm.ClientOptions.
func ExampleCompletions() {
	p := &openai.Completions{ClientOptions: llm.ClientOptions{
		BaseURL:  "https://openrouter.ai/api/v1",
		APIKey:   os.Getenv("OPENROUTER_API_KEY"),
		Provider: "openrouter", // starts every error: "openrouter: 429 too many requests …"
		// Header, HTTP, Timeout (0: 30 s), IdleTimeout (0: 60 s),
		// MaxEventBytes (0: 64 MiB)
	}}
	var _ llm.Provider = p
	fmt.Println(p.Provider, p.Timeout == 0)
	// Output: openrouter true
}
