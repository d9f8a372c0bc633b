package rpc_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/rpc"
	"github.com/rally-agent/rally/session"
)

// Start rally in RPC mode, stream an answer and wait through any retries.
func ExampleStart() {
	ctx := context.Background()
	c, err := rpc.Start(ctx, "rally", "--no-session") // runs rally --mode rpc --no-session
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // closes stdin: rally aborts any run and exits

	unsubscribe := c.Subscribe(func(e rpc.Event) {
		switch e := e.(type) {
		case session.MessageUpdateEvent:
			if e.Assistant.Type == llm.EventTextDelta {
				fmt.Print(e.Assistant.Delta)
			}
		case session.AutoRetryStartEvent:
			fmt.Fprintf(os.Stderr, "\nretrying (%d/%d) in %dms: %s\n", e.Attempt, e.MaxAttempts, e.DelayMs, e.ErrorMessage)
		}
	})
	defer unsubscribe()

	if err := c.Prompt(ctx, "What does rally do?", rpc.PromptOptions{}); err != nil {
		log.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil { // through every retry, to agent_settled
		log.Fatal(err)
	}
	st, _ := c.GetState(ctx)
	fmt.Println("\nmessages:", st.MessageCount)
}
