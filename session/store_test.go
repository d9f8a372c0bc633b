package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// fullStore is a Store on a disk that is full while full is set: every
// append fails with ENOSPC, as journal's do.
type fullStore struct {
	mu    sync.Mutex
	full  bool
	saved []string // roles of the messages it kept
	n     int
}

func (f *fullStore) setFull(v bool) { f.mu.Lock(); f.full = v; f.mu.Unlock() }

func (f *fullStore) fail() error {
	if f.full {
		return fmt.Errorf("journal: append to s.jsonl: write s.jsonl: %w", syscall.ENOSPC)
	}
	return nil
}

func (f *fullStore) AppendDecided(m llm.Message, _ bool, _ *journal.Decision) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail(); err != nil {
		return "", err
	}
	f.n++
	f.saved = append(f.saved, string(m.Role))
	return fmt.Sprint(f.n), nil
}

func (f *fullStore) AppendModelChange(string, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail()
}

func (f *fullStore) AppendCompaction(string, string, int, time.Time) error { return nil }
func (f *fullStore) SetName(string) error                                  { return nil }
func (f *fullStore) Path() string                                          { return "s.jsonl" }
func (f *fullStore) ID() string                                            { return "id" }

// fillingTool fills the disk when it runs.
type fillingTool struct {
	counter
	store *fullStore
}

func (f *fillingTool) Run(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	f.store.setFull(true)
	return f.counter.Run(ctx, args)
}

// TestStoreFailureIsVisible: a save that fails is announced to every
// subscriber (session_error with what was being saved), kept for StoreErr,
// and the session goes on in memory: the tool result the disk refused is
// still sent to the model, and later prompts still work.
func TestStoreFailureIsVisible(t *testing.T) {
	store := &fullStore{}
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
	f := &fake{steps: []step{
		{calls: []llm.Content{call}},
		{text: "counted once"},
		{text: "second answer"},
	}}
	// The disk fills while the tool runs: its result and the answer after
	// it are not saved.
	fill := &fillingTool{store: store}
	s, rec, stop := newSession(t, f, Config{Store: store, Tools: []tool.Tool{fill}})
	other := &recorder{}
	stopOther := s.Subscribe(other.add)
	if err := s.Prompt(t.Context(), "count", PromptOptions{}); err != nil {
		t.Fatalf("the prompt failed because the disk is full: %v", err)
	}
	store.setFull(false)
	if err := s.Prompt(t.Context(), "again", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	stopOther()
	if got := store.saved; len(got) != 4 {
		t.Errorf("saved %q, want user, assistant, user, assistant", got)
	}

	err := s.StoreErr()
	if !errors.Is(err, syscall.ENOSPC) || err.Error() != "session: save message: journal: append to s.jsonl: write s.jsonl: no space left on device" {
		t.Fatalf("StoreErr %v", err)
	}
	for _, r := range []*recorder{rec, other} {
		errs := of[SessionErrorEvent](r)
		if len(errs) == 0 {
			t.Fatal("no session_error event")
		}
		for _, e := range errs {
			if e.Op != OpSaveMessage || e.ErrorMessage != "journal: append to s.jsonl: write s.jsonl: no space left on device" {
				t.Errorf("session_error %+v", e)
			}
		}
	}
	// In memory nothing is lost: the model saw the tool result, and the
	// second prompt's context holds the whole first exchange.
	if got := len(f.request(1).Messages); got != 3 {
		t.Errorf("second call sent %d messages, want 3 (user, tool call, tool result)", got)
	}
	if got := len(f.request(2).Messages); got != 5 {
		t.Errorf("third call sent %d messages, want 5", got)
	}
	if got := len(s.Messages()); got != 6 {
		t.Errorf("%d messages in memory, want 6", got)
	}
}
