package llmtest_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

func TestReplayByteExact(t *testing.T) {
	for _, name := range []string{"anthropic-hello.sse", "gemini-hello-crlf.sse"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(llmtest.Replay(want, 0))
			defer hs.Close()
			// Any path: a replay does not care which API was asked for.
			for _, path := range []string{"/v1/messages", "/anything/at/all"} {
				resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Errorf("%s: status %d content-type %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: replay differs from the file:\n%q\n%q", path, got, want)
				}
			}
		})
	}
}

func TestReplayErrorBodyWithStatus(t *testing.T) {
	body, err := os.ReadFile("testdata/gemini-error-429.json")
	if err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(llmtest.Step{Raw: body, Status: 429, Header: map[string]string{"x-extra": "1"}})
	s.Start(t)
	resp := mustPost(t, s.URL, llmtest.GoogleGenerativeAI)
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("x-extra") != "1" || !bytes.Equal(got, body) {
		t.Errorf("status %d %v\n%s", resp.StatusCode, resp.Header, got)
	}
	if r := s.Requests()[0]; r.Outcome != "replay" || r.Step != 1 {
		t.Errorf("record %+v", r)
	}
}

// A replay can be cut like any stream: After counts events.
func TestReplayWithFault(t *testing.T) {
	raw, _ := os.ReadFile("testdata/anthropic-hello.sse")
	s := llmtest.NewServer(t,
		llmtest.Step{Raw: raw, Fault: llmtest.Drop, After: 4},
		llmtest.Step{Raw: raw, Fault: llmtest.ErrorEvent, After: 4},
	)
	resp := mustPost(t, s.URL, llmtest.AnthropicMessages)
	got, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("drop: %v", err)
	}
	want := bytes.Join(bytes.SplitAfter(raw, []byte("\n\n"))[:4], nil)
	if !bytes.Equal(got, want) {
		t.Errorf("drop after 4 events sent:\n%s", got)
	}
	evs, err := readAll(mustPost(t, s.URL, llmtest.AnthropicMessages).Body)
	if err != nil || evs[len(evs)-1].name != "error" || len(evs) != 5 {
		t.Errorf("error event after 4: %v %v", err, evs)
	}
}
