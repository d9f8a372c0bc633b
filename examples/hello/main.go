// Command hello is the smallest rally embedding: a session on the offline
// sim model, a subscriber, a prompt.
//
//	go run ./examples/hello
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/session"
)

func main() {
	s, err := session.New(session.Config{Provider: &sim.Model{}, Model: sim.Info()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	unsubscribe := s.Subscribe(func(e session.Event) {
		switch e := e.(type) {
		case session.AutoRetryStartEvent:
			fmt.Printf("[retry %d/%d in %dms: %s]\n", e.Attempt, e.MaxAttempts, e.DelayMs, e.ErrorMessage)
		case session.MessageEndEvent:
			if e.Message.Role == llm.Assistant {
				fmt.Println(e.Message.TextOf())
			}
		}
	})
	err = s.Prompt(context.Background(), "What does rally do?", session.PromptOptions{})
	unsubscribe() // every event of the prompt has been delivered
	if err != nil {
		fmt.Fprintln(os.Stderr, "prompt failed:", err)
		os.Exit(1)
	}
}
