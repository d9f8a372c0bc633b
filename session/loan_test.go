package session

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llm"
)

// words streams n numbered words ("w0 ", "w1 ", …) as text deltas; if
// ack is set, each delta after the first waits for a receive from it.
// The words are made up front, so streaming them allocates nothing.
type words struct {
	n   int
	ack chan struct{}
	w   []string
}

func newWords(n int, ack chan struct{}) words {
	w := words{n: n, ack: ack, w: make([]string, n)}
	for i := range w.w {
		w.w[i] = word(i)
	}
	return w
}

func (w words) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	i := 0
	return llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
		if i > w.n {
			return io.EOF
		}
		if i == w.n {
			b.Finish(llm.Stop)
			i++
			return nil
		}
		if w.ack != nil && i > 0 {
			select {
			case <-w.ack:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b.Text("0", w.w[i])
		i++
		return nil
	}, nil), nil
}

func word(i int) string { return "w" + strconv.Itoa(i) + " " }

// checkUpdates fails unless ups are the n text_delta updates of a words stream, each
// with its own delta and the text up to it.
func checkUpdates(t *testing.T, who string, ups []MessageUpdateEvent, n int) {
	t.Helper()
	if len(ups) != n {
		t.Fatalf("%s: %d updates, want %d", who, len(ups), n)
	}
	var text strings.Builder
	for k, u := range ups {
		text.WriteString(word(k))
		if u.Assistant.Delta != word(k) || u.Message.Content[0].Text != text.String() || u.Assistant.Partial != u.Message {
			t.Fatalf("%s: update %d has delta %q, text of %d bytes, partial %p of message %p; want %q, %d bytes, the same",
				who, k, u.Assistant.Delta, len(u.Message.Content[0].Text), u.Assistant.Partial, u.Message, word(k), text.Len())
		}
	}
}

// TestLoanedUpdates: a loaned subscriber that falls hundreds of events
// behind still reads each update as it was when emitted (a loan is reused
// only after fn returned from it), and a Watch subscriber beside it keeps
// its own snapshots, unchanged after the run.
func TestLoanedUpdates(t *testing.T) {
	const n = 300 // under subscriberBuffer: the run never waits for them
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Config{Provider: newWords(n, nil)})
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var loaned, kept []MessageUpdateEvent
		lsub := s.WatchLoaned(func(e Event) {
			<-release
			if u, ok := e.(MessageUpdateEvent); ok && u.Assistant.Type == llm.EventTextDelta {
				// Read it now, as the contract says: copy what is kept.
				c := *u.Message.Clone()
				a := *u.Assistant
				a.Partial = &c
				loaned = append(loaned, MessageUpdateEvent{Message: &c, Assistant: &a})
			}
		})
		ksub := s.Watch(func(e Event) {
			if u, ok := e.(MessageUpdateEvent); ok && u.Assistant.Type == llm.EventTextDelta {
				kept = append(kept, u)
			}
		})
		if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // every event is queued; the loaned subscriber has read none
		close(release)
		lsub.Close()
		ksub.Close()
		checkUpdates(t, "loaned", loaned, n)
		checkUpdates(t, "watch", kept, n)
	})
}

// TestLoanedDeltaAllocs: in steady state a streamed delta allocates
// nothing between the provider's stream and a loaned subscriber (issue 25:
// the agent loop's update event and the fan-out's snapshot are reused).
// The subscriber keeps pace with the stream (the provider waits for it),
// so the loans in flight are bounded, and a run of 2n deltas allocates
// what a run of n does, up to the logarithmic growth of the answer's
// buffers; one allocation per delta would add n. MemStats counts the
// whole process, so the runs happen alone in a child process
// (proctest.Alone): other tests and their leftover goroutines would add
// their own allocations to the difference.
func TestLoanedDeltaAllocs(t *testing.T) {
	if !proctest.Alone(t) {
		return
	}
	const n = 5000
	run := func(deltas int) uint64 {
		ack := make(chan struct{})
		s, err := New(Config{Provider: newWords(deltas, ack)})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		sub := s.WatchLoaned(func(e Event) {
			if u, ok := e.(MessageUpdateEvent); ok && u.Assistant.Type == llm.EventTextDelta {
				if seen++; seen < deltas { // nothing waits after the last
					ack <- struct{}{}
				}
			}
		})
		defer sub.Close()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs
	}
	run(n) // warm up: first-use costs of the packages involved
	one, two := run(n), run(2*n)
	extra := int64(two) - int64(one)
	t.Logf("%d deltas: %d allocations; %d deltas: %d", n, one, 2*n, two)
	if extra > 16 {
		t.Errorf("%d more deltas cost %d more allocations: want none per delta", n, extra)
	}
}
