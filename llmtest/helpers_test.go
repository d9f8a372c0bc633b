package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// Plain net/http clients and a small SSE reader of the tests' own: the
// server is checked against the wire formats, not against rally's clients.

// pathFor is a request path for api, under the prefix each provider uses.
func pathFor(api llmtest.API) string {
	switch api {
	case llmtest.OpenAICompletions:
		return "/v1/chat/completions"
	case llmtest.OpenAIResponses:
		return "/v1/responses"
	case llmtest.AnthropicMessages:
		return "/v1/messages"
	}
	return "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
}

// bodyFor is a streaming request body with two conversation entries.
func bodyFor(api llmtest.API) string {
	switch api {
	case llmtest.OpenAICompletions:
		return `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`
	case llmtest.OpenAIResponses:
		return `{"model":"gpt-test","stream":true,"input":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}]}`
	case llmtest.AnthropicMessages:
		return `{"model":"claude-test","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`
	}
	return `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}]}`
}

// post sends api's request to base with the given headers.
func post(ctx context.Context, t *testing.T, base string, api llmtest.API, hdr map[string]string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+pathFor(api), strings.NewReader(bodyFor(api)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// mustPost is post for a request that must get a response.
func mustPost(t *testing.T, base string, api llmtest.API) *http.Response {
	t.Helper()
	resp, err := post(context.Background(), t, base, api, nil)
	if err != nil {
		t.Fatalf("%s: %v", api, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type event struct{ name, data string }

type sseReader struct{ br *bufio.Reader }

func newSSE(r io.Reader) *sseReader { return &sseReader{bufio.NewReader(r)} }

// next returns the next event; io.EOF at a clean end.
func (s *sseReader) next() (event, error) {
	var ev event
	has := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && has {
				return ev, nil
			}
			if err == io.EOF && line != "" {
				err = io.ErrUnexpectedEOF // an event cut in the middle
			}
			return ev, err
		}
		l := strings.TrimRight(line, "\r\n")
		switch {
		case l == "":
			if has {
				return ev, nil
			}
		case strings.HasPrefix(l, ":"):
		case strings.HasPrefix(l, "event:"):
			ev.name, has = strings.TrimSpace(l[6:]), true
		case strings.HasPrefix(l, "data:"):
			d := strings.TrimPrefix(l[5:], " ")
			if ev.data != "" {
				d = ev.data + "\n" + d
			}
			ev.data, has = d, true
		}
	}
}

// readAll reads events to the end; err is what ended the stream (nil for
// a clean end).
func readAll(r io.Reader) ([]event, error) {
	s := newSSE(r)
	var evs []event
	for {
		ev, err := s.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

type toolOut struct{ id, name, args string }

// result is a stream assembled the way a client would.
type result struct {
	text, thinking string
	tools          []toolOut
	stop           string
	usage          map[string]any
	errType        string
	terminal       bool
	deltas         int
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data is not JSON: %v\n%s", err, data)
	}
	return m
}

func get(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, ok := m.(map[string]any)
			if !ok {
				return nil
			}
			m = mm[k]
		case int:
			a, ok := m.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			m = a[k]
		}
	}
	return m
}

func str(m any, path ...any) string {
	s, _ := get(m, path...).(string)
	return s
}

func assemble(t *testing.T, api llmtest.API, evs []event) result {
	t.Helper()
	var r result
	switch api {
	case llmtest.OpenAICompletions:
		byIndex := map[float64]int{}
		for _, ev := range evs {
			if ev.data == "[DONE]" {
				r.terminal = true
				continue
			}
			m := decode(t, ev.data)
			if e := get(m, "error"); e != nil {
				r.errType = str(e, "type")
				continue
			}
			if u, ok := get(m, "usage").(map[string]any); ok {
				r.usage = u
			}
			d := get(m, "choices", 0, "delta")
			if s := str(d, "content"); s != "" {
				r.text += s
				r.deltas++
			}
			if s := str(d, "reasoning_content"); s != "" {
				r.thinking += s
				r.deltas++
			}
			if tcs, ok := get(d, "tool_calls").([]any); ok {
				for _, tc := range tcs {
					idx := get(tc, "index").(float64)
					i, seen := byIndex[idx]
					if !seen {
						i = len(r.tools)
						byIndex[idx] = i
						r.tools = append(r.tools, toolOut{id: str(tc, "id"), name: str(tc, "function", "name")})
					}
					if a := str(tc, "function", "arguments"); a != "" {
						r.tools[i].args += a
						r.deltas++
					}
				}
			}
			if s := str(m, "choices", 0, "finish_reason"); s != "" {
				r.stop = s
			}
		}
	case llmtest.OpenAIResponses:
		byItem := map[string]int{}
		for _, ev := range evs {
			m := decode(t, ev.data)
			if str(m, "type") != ev.name {
				t.Errorf("event %q carries type %q", ev.name, str(m, "type"))
			}
			switch ev.name {
			case "response.output_text.delta":
				r.text += str(m, "delta")
				r.deltas++
			case "response.reasoning_summary_text.delta":
				r.thinking += str(m, "delta")
				r.deltas++
			case "response.output_item.added":
				if str(m, "item", "type") == "function_call" {
					byItem[str(m, "item", "id")] = len(r.tools)
					r.tools = append(r.tools, toolOut{id: str(m, "item", "call_id"), name: str(m, "item", "name")})
				}
			case "response.function_call_arguments.delta":
				r.tools[byItem[str(m, "item_id")]].args += str(m, "delta")
				r.deltas++
			case "response.completed", "response.incomplete", "response.failed":
				r.terminal = ev.name != "response.failed"
				r.stop = str(m, "response", "status")
				r.usage, _ = get(m, "response", "usage").(map[string]any)
			case "error":
				r.errType = str(m, "error", "code")
			}
		}
	case llmtest.AnthropicMessages:
		byIndex := map[float64]int{}
		for _, ev := range evs {
			m := decode(t, ev.data)
			if str(m, "type") != ev.name {
				t.Errorf("event %q carries type %q", ev.name, str(m, "type"))
			}
			switch ev.name {
			case "message_start":
				r.usage, _ = get(m, "message", "usage").(map[string]any)
			case "content_block_start":
				if str(m, "content_block", "type") == "tool_use" {
					byIndex[get(m, "index").(float64)] = len(r.tools)
					r.tools = append(r.tools, toolOut{id: str(m, "content_block", "id"), name: str(m, "content_block", "name")})
				}
			case "content_block_delta":
				switch d := get(m, "delta"); str(d, "type") {
				case "text_delta":
					r.text += str(d, "text")
					r.deltas++
				case "thinking_delta":
					r.thinking += str(d, "thinking")
					r.deltas++
				case "input_json_delta":
					if p := str(d, "partial_json"); p != "" {
						r.tools[byIndex[get(m, "index").(float64)]].args += p
						r.deltas++
					}
				}
			case "message_delta":
				r.stop = str(m, "delta", "stop_reason")
				r.usage, _ = get(m, "usage").(map[string]any)
			case "message_stop":
				r.terminal = true
			case "error":
				r.errType = str(m, "error", "type")
			}
		}
	case llmtest.GoogleGenerativeAI:
		for _, ev := range evs {
			m := decode(t, ev.data)
			if e := get(m, "error"); e != nil {
				r.errType = str(e, "status")
				continue
			}
			parts, _ := get(m, "candidates", 0, "content", "parts").([]any)
			for _, p := range parts {
				switch {
				case get(p, "functionCall") != nil:
					args, _ := json.Marshal(get(p, "functionCall", "args"))
					r.tools = append(r.tools, toolOut{id: str(p, "functionCall", "id"), name: str(p, "functionCall", "name"), args: string(args)})
					r.deltas++
				case get(p, "thought") == true:
					r.thinking += str(p, "text")
					r.deltas++
				default:
					r.text += str(p, "text")
					r.deltas++
				}
			}
			r.usage, _ = get(m, "usageMetadata").(map[string]any)
			if s := str(m, "candidates", 0, "finishReason"); s != "" {
				r.stop, r.terminal = s, true
			}
		}
	}
	return r
}

// outcomes waits for n finished requests reported through OnRequest, and
// returns their outcomes in the order they finished.
func outcomes(t *testing.T, ch <-chan llmtest.Request, n int) []string {
	t.Helper()
	var out []string
	for range n {
		select {
		case r := <-ch:
			out = append(out, r.Outcome)
		case <-time.After(10 * time.Second):
			// A guard against a hang, not a timing assumption.
			t.Fatalf("no request finished after 10s; got %q so far", out)
		}
	}
	return out
}

// started starts a Server that reports finished requests on the returned
// channel.
func started(t *testing.T, script ...llmtest.Step) (*llmtest.Server, <-chan llmtest.Request) {
	t.Helper()
	ch := make(chan llmtest.Request, 64)
	s := llmtest.New(script...)
	s.OnRequest = func(r llmtest.Request) { ch <- r }
	s.Start(t)
	return s, ch
}
