package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// streamHeapFake is BenchmarkStreamHeap's fake LLM, run in a process of
// its own (this test binary again, chosen by TestMain when
// RALLY_STREAMHEAP_FAKE is set) so that the server's side of each
// connection is not in the heap measured.
func streamHeapFake() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// Ten chunks 300 ms apart: every session is mid-answer, with nothing
	// in flight, when the heap is read (within the first 3 s).
	srv := &http.Server{Handler: llmtest.New(llmtest.Step{Text: strings.TrimSpace(strings.Repeat("heap ", 10)), Chunks: 10, Delay: 300 * time.Millisecond})}
	go srv.Serve(ln)
	fmt.Println("http://" + ln.Addr().String())
	io.Copy(io.Discard, os.Stdin) // until the benchmark closes it
	return srv.Close()
}

// BenchmarkStreamHeap reports what streaming adds to an idle session with
// one subscriber, over HTTP (heap-B/session: what rally and net/http hold
// for a stream; the budget for the whole session is 25 KiB) and
// its goroutine stacks (stack-B/session), read from runtime.MemStats when
// all of 300 sessions are mid-answer against a fake LLM in another process:
// go test -run '^$' -bench StreamHeap -benchtime 3x ./internal/app/bench/ (the
// first round also pays what a process builds once: run several)
func BenchmarkStreamHeap(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RALLY_STREAMHEAP_FAKE=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://") {
		b.Fatalf("fake LLM: %q %v", url, err)
	}
	url = strings.TrimSpace(url)
	const n = 300
	tr := llm.NewTransport()
	tr.MaxIdleConnsPerHost = n
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	pol := retry.Policy{MaxRetries: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: time.Second}
	var heap, stack float64
	for b.Loop() {
		var streaming atomic.Int64
		sessions := make([]*session.Session, n)
		for i := range sessions {
			s, err := session.New(fakeConfig(url, client, pol))
			if err != nil {
				b.Fatal(err)
			}
			sessions[i] = s
			defer s.Subscribe(func(e session.Event) {
				if m, ok := e.(session.MessageStartEvent); ok && m.Message.Role == llm.Assistant {
					streaming.Add(1)
				}
			})()
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, s := range sessions {
			wg.Go(func() { s.Prompt(ctx, "go", session.PromptOptions{}) })
		}
		for deadline := time.Now().Add(20 * time.Second); streaming.Load() < n; {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d sessions streaming after 20 s", streaming.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		now := float64(streaming.Load())
		heap += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / now
		stack += float64(int64(m1.StackInuse)-int64(m0.StackInuse)) / now
		cancel()
		wg.Wait()
	}
	b.ReportMetric(heap/float64(b.N), "heap-B/session")
	b.ReportMetric(stack/float64(b.N), "stack-B/session")
}
