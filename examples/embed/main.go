// Command embed shows rally as a library: a session on the offline sim
// model, a custom tool, and a subscriber that watches retries. A small
// wrapper makes the first model call fail with a 503, so the retry events
// show up without any network.
//
//	go run ./examples/embed
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// flaky fails its first call as an overloaded server would, then lets the
// real provider answer.
type flaky struct {
	llm.Provider
	calls atomic.Int32
}

func (f *flaky) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	if f.calls.Add(1) == 1 {
		return nil, &llm.APIError{Provider: "sim", StatusCode: 503, Message: "service unavailable"}
	}
	return f.Provider.Stream(ctx, req)
}

func main() {
	// A custom tool: the sim model calls "bash" for "run …", so register
	// one under that name that only reports the time.
	clock := tool.Func{
		Def: llm.Tool{Name: "bash", Description: "Reports the current time.", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: []llm.Content{llm.Text(time.Now().Format(time.Kitchen))}}, nil
		},
	}
	pol := retry.Default()
	pol.BaseDelay = 500 * time.Millisecond // a short demo wait
	s, err := session.New(session.Config{
		Provider: &flaky{Provider: &sim.Model{}},
		Model:    sim.Info(),
		Tools:    []tool.Tool{clock},
		Retry:    pol.For,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	unsubscribe := s.Subscribe(func(e session.Event) {
		switch e := e.(type) {
		case session.AutoRetryStartEvent:
			fmt.Printf("[retry %d/%d in %dms: %s]\n", e.Attempt, e.MaxAttempts, e.DelayMs, e.ErrorMessage)
		case session.AutoRetryEndEvent:
			fmt.Printf("[retry ended: success=%v]\n", e.Success)
		case session.ToolExecutionStartEvent:
			fmt.Printf("[tool %s %s]\n", e.ToolName, e.Args)
		case session.MessageUpdateEvent:
			if e.Assistant.Type == llm.EventTextDelta {
				fmt.Print(e.Assistant.Delta)
			}
		case session.MessageEndEvent:
			if e.Message.Role == llm.Assistant && e.Message.TextOf() != "" {
				fmt.Println()
			}
		}
	})
	err = s.Prompt(context.Background(), "run the clock", session.PromptOptions{})
	unsubscribe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "prompt failed:", err)
		os.Exit(1)
	}
}
