package providertest

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Run streams req from p to its end and returns the message, the stream's
// error and the event types seen. A failure of Stream itself ends the
// test.
func Run(t testing.TB, p llm.Provider, req *llm.Request) (*llm.Message, error, []llm.EventType) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	var types []llm.EventType
	var failure error
	for {
		e, err := s.Next()
		if err == io.EOF {
			return s.Message(), failure, types
		}
		types = append(types, e.Type)
		if e.Type == llm.EventError {
			failure = e.Err
		}
	}
}

// Count returns how many of types are t.
func Count(types []llm.EventType, t llm.EventType) int {
	n := 0
	for _, x := range types {
		if x == t {
			n++
		}
	}
	return n
}

// SameJSON reports whether two JSON texts hold the same value.
func SameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// EqualJSON fails t, showing the difference, when got, a decoded JSON
// value, is not the value of the JSON text want: request bodies are
// compared so, as their key order and spacing do not matter.
func EqualJSON(t *testing.T, want string, got any) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// Call is an expected tool call. ID "" accepts any id but none (a client
// makes one up where the API sends none); Args is compared as JSON values;
// Sig, if set, is the call's ThoughtSignature.
type Call struct{ ID, Name, Args, Sig string }

// Want is what a correct client assembles from a stream.
type Want struct {
	Text, Thinking string
	Calls          []Call
	Stop           llm.StopReason
	// Usage, if set, gives the Input, Output, CacheRead and CacheWrite
	// counts; nil means no usage reported.
	Usage *llm.Usage
	// HTTPErr means that Stream itself fails, with no message.
	HTTPErr bool
	// An error is expected when any of these is set: an *llm.APIError of
	// this Type or Code, whose text has ErrHas, classified Class.
	ErrType, ErrCode, ErrHas string
	Class                    retry.Class
}

// Tokens is a usage of in input and out output tokens.
func Tokens(in, out int) *llm.Usage { return &llm.Usage{Input: in, Output: out} }

// Check compares a streamed message, or the error of Stream (m nil), with
// w.
func Check(t *testing.T, m *llm.Message, err error, w Want) {
	t.Helper()
	if w.ErrType != "" || w.ErrCode != "" || w.ErrHas != "" {
		if err == nil {
			if m != nil {
				t.Fatalf("no error; stop %q", m.StopReason)
			}
			t.Fatal("no error")
		}
		e, ok := llm.AsAPIError(err)
		if w.ErrType != "" && (!ok || e.Type != w.ErrType) {
			t.Errorf("error %#v, want type %q", err, w.ErrType)
		}
		if w.ErrCode != "" && (!ok || e.Code != w.ErrCode) {
			t.Errorf("error %#v, want code %q", err, w.ErrCode)
		}
		if !strings.Contains(err.Error(), w.ErrHas) {
			t.Errorf("error %q lacks %q", err, w.ErrHas)
		}
		if c := llm.Classify(err).Class; c != w.Class {
			t.Errorf("classified %v, want %v", c, w.Class)
		}
	} else if err != nil {
		t.Fatalf("error %v", err)
	}
	if w.HTTPErr || m == nil {
		if w.HTTPErr && m != nil {
			t.Errorf("a stream from an HTTP error: %+v", m)
		}
		if !w.HTTPErr && m == nil {
			t.Fatal("no stream")
		}
		return
	}
	if m.StopReason != w.Stop {
		t.Errorf("stop %q, want %q", m.StopReason, w.Stop)
	}
	if got := m.TextOf(); got != w.Text {
		t.Errorf("text %q, want %q", got, w.Text)
	}
	var thinking string
	for _, c := range m.Content {
		if c.Type == llm.ThinkingType {
			thinking += c.Thinking
		}
	}
	if thinking != w.Thinking {
		t.Errorf("thinking %q, want %q", thinking, w.Thinking)
	}
	calls := m.ToolCalls()
	if len(calls) != len(w.Calls) {
		t.Fatalf("tool calls %+v, want %+v", calls, w.Calls)
	}
	for i, c := range w.Calls {
		got := calls[i]
		if got.ID == "" || (c.ID != "" && got.ID != c.ID) || got.Name != c.Name || !SameJSON(string(got.Arguments), c.Args) ||
			(c.Sig != "" && got.ThoughtSignature != c.Sig) {
			t.Errorf("call %d = %+v, want %+v", i, got, c)
		}
	}
	switch {
	case w.Usage == nil && m.Usage != nil:
		t.Errorf("usage %+v, want none", m.Usage)
	case w.Usage != nil && m.Usage == nil:
		t.Errorf("no usage, want %+v", *w.Usage)
	case w.Usage != nil:
		u := *m.Usage
		if u.Input != w.Usage.Input || u.Output != w.Usage.Output || u.CacheRead != w.Usage.CacheRead || u.CacheWrite != w.Usage.CacheWrite {
			t.Errorf("usage %+v, want %+v", u, *w.Usage)
		}
		if u.TotalTokens != u.Input+u.Output+u.CacheRead+u.CacheWrite {
			t.Errorf("total tokens %d", u.TotalTokens)
		}
	}
}

// Unpaired is a conversation whose tool calls and results do not pair up,
// as after an abort and a failed stream, for the clients' tests of how
// they send it. Mended by wire.Repair, it is: the user's "go"; the answer
// with calls a and b; the result of a and a stand-in for b; "go" again;
// the answer with call c; a stand-in for c.
func Unpaired() []llm.Message {
	call := func(id string) llm.Content {
		return llm.Content{Type: llm.ToolCallType, ID: id, Name: "bash", Arguments: json.RawMessage(`{}`)}
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.ToolResult, ToolCallID: id, ToolName: "bash", Content: []llm.Content{llm.Text("ok " + id)}}
	}
	user := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("go")}}
	return []llm.Message{
		user,
		{Role: llm.Assistant, StopReason: llm.Aborted, Content: []llm.Content{llm.Text("cut"), call("x1")}},
		{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: "overloaded", Content: []llm.Content{llm.Text("partial")}},
		{Role: llm.Assistant, StopReason: llm.ToolUse, Content: []llm.Content{call("a"), call("b")}},
		result("a"),
		result("zzz"), // its call is not in the conversation
		user,
		{Role: llm.Assistant, StopReason: llm.ToolUse, Content: []llm.Content{call("c")}},
	}
}
