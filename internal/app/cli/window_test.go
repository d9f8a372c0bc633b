package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/window"
)

// smallServer is a local OpenAI-compatible server with a small context
// window that it enforces on every request, counting a request's tokens
// its own way (its whole JSON body, four bytes a token: system prompt,
// tool schemas and framing included, which rally's estimate of the
// messages does not see), and that states the window in its overflow
// error, as vLLM and llama.cpp's OpenAI endpoint do. Requests that fit go
// to the llmtest fake, whose usage reports the same count.
type smallServer struct {
	window int
	fake   *llmtest.Server

	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	tokens   int
	summary  bool // rally's compaction asking for a summary
	overflow bool // refused: more than the window
}

func (s *smallServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := (len(body) + 3) / 4
	rq := seenRequest{tokens: n, summary: bytes.Contains(body, []byte("You summarise a coding agent")), overflow: n > s.window}
	s.mu.Lock()
	s.seen = append(s.seen, rq)
	s.mu.Unlock()
	if rq.overflow {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, s.window, n)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.fake.ServeHTTP(w, r)
}

func (s *smallServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

// TestSmallContextServer is issue 13's local-model case: a 10-prompt
// conversation, one rally process per prompt with --continue, on a model
// rally knows nothing about (it assumes 128,000 tokens) served with an
// 8,192-token window. Every prompt is answered, at most one request in
// total overflows (the one that teaches rally the window), every summary
// request fits, and the processes after it know the window from
// $RALLY_HOME before their first call.
func TestSmallContextServer(t *testing.T) {
	home := isolate(t)
	const win = 8192
	answer := strings.Repeat("The build log shows the linker running out of memory while it links the report binary; splitting the package or raising the limit fixes it. ", 24)
	srv := &smallServer{window: win, fake: llmtest.New(llmtest.Step{Text: answer, Chunks: 8})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.fake.Close()

	logLine := strings.Repeat("ld: warning: memory pressure while linking section .text of report.o ", 50)
	args := []string{"--api", "openai-completions", "--base-url", hs.URL + "/v1", "--model", "local-model", "--continue", "-p"}
	overflowsAt, laterSummaries := 0, 0
	for i := 1; i <= 10; i++ {
		before := len(srv.requests())
		out, errOut, code := runMain(t, append(args, fmt.Sprintf("Prompt %d: here is the next part of the build log, what does it say?\n%s", i, logLine))...)
		if code != 0 || !strings.Contains(out, "linker running out of memory") {
			t.Fatalf("prompt %d: exit %d\nstdout %.200q\nstderr %s", i, code, out, errOut)
		}
		for _, r := range srv.requests()[before:] {
			if r.overflow && overflowsAt == 0 {
				overflowsAt = i
			}
			if r.summary && overflowsAt != 0 && overflowsAt < i {
				laterSummaries++
			}
		}
	}
	reqs := srv.requests()
	overflows, summaries := 0, 0
	for _, r := range reqs {
		if r.overflow {
			overflows++
		}
		if r.summary {
			summaries++
			if r.overflow {
				t.Errorf("a summary request of %d tokens overflowed the %d-token window", r.tokens, win)
			}
		}
	}
	t.Logf("10 prompts answered; %d requests, %d overflowing (at prompt %d), %d summary requests (%d by later processes)", len(reqs), overflows, overflowsAt, summaries, laterSummaries)
	if overflows > 1 {
		t.Errorf("%d overflowing requests, want at most 1", overflows)
	}
	if overflowsAt == 0 || laterSummaries == 0 {
		t.Fatalf("the conversation never outgrew the window again after learning it (overflow at prompt %d, %d later summaries): the test proves nothing", overflowsAt, laterSummaries)
	}
	// The window is in $RALLY_HOME for every later process…
	all, err := (&window.File{Path: window.Path(home)}).All(t.Context())
	if err != nil || len(all) != 1 || all[0].Tokens != win || all[0].Model != "local-model" {
		t.Fatalf("learned windows %+v (%v), want local-model's %d", all, err, win)
	}
	// …and a new process reports it in get_state.
	cmd := rallyCmd("--mode", "rpc", "--api", "openai-completions", "--base-url", hs.URL+"/v1", "--model", "local-model", "--continue")
	cmd.Stdin = strings.NewReader(`{"id":"1","type":"get_state"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Data struct {
			Model struct {
				ContextWindow int `json:"contextWindow"`
			} `json:"model"`
		} `json:"data"`
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Data.Model.ContextWindow != win {
		t.Errorf("get_state in a new process: contextWindow %d (%v), want %d\n%s", resp.Data.Model.ContextWindow, err, win, out)
	}
}

// TestOverflowPresetCompacts: the --preset overflow demo compacts on a
// first prompt (its seeded conversation has an older part) and answers.
func TestOverflowPresetCompacts(t *testing.T) {
	home := isolate(t)
	out, errOut, code := run(t, "", "--preset", "overflow", "-p", "What does rally do?")
	if code != 0 || !strings.Contains(out, "survive provider failures") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	// The README's "Learned context windows" section shows these lines.
	if want := "rally: compacting the conversation (overflow)…\nrally: compacted 1314 tokens into a summary\n"; errOut != want {
		t.Errorf("stderr %q, want a successful compaction: %q", errOut, want)
	}
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	b, _ := os.ReadFile(files[0])
	if !bytes.Contains(b, []byte(`"type":"compaction"`)) || !bytes.Contains(b, []byte("Add CSV output")) {
		t.Errorf("session file has no compaction entry with the preset's summary")
	}
	// The demo's fake model teaches the real store nothing.
	if _, err := os.Stat(window.Path(home)); !os.IsNotExist(err) {
		t.Errorf("the demo wrote %s (%v)", window.Path(home), err)
	}
}

// rallyCmd is rally as a child process (the test binary acting as rally,
// see TestMain), sharing this test's RALLY_HOME and directory.
func rallyCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	return cmd
}
