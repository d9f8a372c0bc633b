package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// TestBackgroundResume: a Responses stream in background mode that breaks
// (the body cut short, or gone idle) fails with an *llm.Drop whose
// Reconnect reads the rest from the cursor into the same message; the
// text comes once, in order.
func TestBackgroundResume(t *testing.T) {
	text := "alpha beta gamma delta epsilon zeta eta theta"
	for _, tc := range []struct {
		name string
		step llmtest.Step
	}{
		{"truncated", llmtest.Step{Text: text, Fault: llmtest.Drop, After: 3}},
		{"idle", llmtest.Step{Text: text, Fault: llmtest.Stall, After: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.step)
			c := &Responses{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", Resume: true, IdleTimeout: 100 * time.Millisecond}}
			s, err := c.Stream(t.Context(), &llm.Request{Model: llm.Model{ID: "m"}, Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("hi")}}}})
			if err != nil {
				t.Fatal(err)
			}
			var drops []*llm.Drop
			s.OnDrop(func(d *llm.Drop) bool {
				drops = append(drops, d)
				return d.Reconnect(context.Background()) == nil
			})
			var deltas strings.Builder
			for {
				e, err := s.Next()
				if err != nil {
					break
				}
				if e.Type == llm.EventTextDelta {
					deltas.WriteString(e.Delta)
				}
				if e.Type == llm.EventError {
					t.Fatalf("stream failed: %v", e.Err)
				}
			}
			s.Close()
			if len(drops) != 1 || drops[0].Method != llm.ResumeCursor || drops[0].Cursor == "" {
				t.Fatalf("drops %+v, want one with a cursor", drops)
			}
			if got := s.Message().TextOf(); got != text || deltas.String() != text {
				t.Errorf("message %q, deltas %q; want %q once", got, deltas.String(), text)
			}
		})
	}
}
