package auth_test

import (
	"context"
	"log"
	"os"
	"path/filepath"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/session"
)

// A Go program that embeds rally: the keys of auth.json and
// $OPENAI_API_KEY, marks shared with every rally process on the machine,
// and a cheaper model as the fallback.
func ExampleRotation() {
	ctx := context.Background()
	home := filepath.Join(os.Getenv("HOME"), ".rally")
	file, err := auth.Load(auth.Path(home))
	if err != nil {
		log.Fatal(err) // e.g. "… fix it with: chmod 600 …"
	}
	rot := auth.New(auth.Config{
		Marks: &auth.FileMarks{Path: auth.MarksPath(home)},
		Credentials: func(provider string) ([]auth.Credential, error) {
			return file.Pool(provider, []string{"OPENAI_API_KEY"}, os.Getenv), nil
		},
		Connect: func(provider, model, key string) (llm.Provider, llm.Model, error) {
			return &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: "https://api.openai.com/v1", APIKey: key, Provider: provider}},
				llm.Model{Provider: provider, ID: model, API: llm.APIOpenAICompletions}, nil
		},
		Fallbacks: []string{"openai/gpt-4o-mini"},
	})
	start, err := rot.Start(ctx, "openai", "gpt-4o")
	if err != nil {
		log.Fatal(err)
	}
	s, err := session.New(session.Config{Provider: start.Provider, Model: start.Model, Ref: start.Ref, Switcher: rot})
	if err != nil {
		log.Fatal(err)
	}
	_ = s.Prompt(ctx, "What does rally do?", session.PromptOptions{})
}
