package session

import (
	"context"
	"sync"
	"testing"
)

// TestSubscribeToOnlyKinds: a SubscribeTo subscriber gets the kinds it
// named and nothing else; the storeNotices subscriber of every run is one,
// and a streamed delta must not be copied and queued for it.
func TestSubscribeToOnlyKinds(t *testing.T) {
	s, err := New(Config{Provider: deltas{50}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []EventType
	stop := s.SubscribeTo([]EventType{AgentStart, AgentSettled}, func(e Event) {
		mu.Lock()
		got = append(got, e.Kind())
		mu.Unlock()
	})
	if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	<-s.Idle()
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != AgentStart || got[1] != AgentSettled {
		t.Errorf("got %v, want [agent_start agent_settled]", got)
	}
}
