package gemini

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

const testKey = "AIzaSyTEST-secret-key-0123456789abcdef"

// chunkOf formats one streamed chunk with the given parts, finish reason
// and usage (prompt, candidates, thoughts, cached; nil for none).
func chunkOf(parts string, finish string, u []int) string {
	cand := `{"content":{"parts":[` + parts + `],"role":"model"},"index":0`
	if finish != "" {
		cand += `,"finishReason":"` + finish + `"`
	}
	cand += "}"
	s := `{"candidates":[` + cand + `]`
	if u != nil {
		s += fmt.Sprintf(`,"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"thoughtsTokenCount":%d,"cachedContentTokenCount":%d,"totalTokenCount":%d}`, u[0], u[1], u[2], u[3], u[0]+u[1]+u[2])
	}
	return data(s + `,"modelVersion":"gemini-2.5-flash","responseId":"resp1"}`)
}

func data(s string) string { return "data: " + s + "\r\n\r\n" }

func text(s string) string    { return `{"text":` + providertest.Quote(s) + `}` }
func thought(s string) string { return `{"text":` + providertest.Quote(s) + `,"thought":true}` }

func call(name, args, id, sig string) string {
	fc := `{"name":` + providertest.Quote(name) + `,"args":` + args
	if id != "" {
		fc += `,"id":` + providertest.Quote(id)
	}
	p := `{"functionCall":` + fc + `}`
	if sig != "" {
		p += `,"thoughtSignature":` + providertest.Quote(sig)
	}
	return p + "}"
}

// textBody is a whole, well-formed answer of the given text pieces.
func textBody(pieces ...string) string {
	var b strings.Builder
	for i, p := range pieces {
		finish := ""
		u := []int{12, i + 1, 0, 0}
		if i == len(pieces)-1 {
			finish = "STOP"
		}
		b.WriteString(chunkOf(text(p), finish, u))
	}
	return b.String()
}

// api answers as the Gemini API does.
var api = providertest.Wire{StreamType: "text/event-stream", ErrorType: "application/json; charset=UTF-8", End: "\r\n\r\n"}

func client(s *providertest.Server) *Client {
	return &Client{ClientOptions: llm.ClientOptions{BaseURL: s.URL + "/v1beta", APIKey: testKey, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}}
}

func model() llm.Model {
	m, _ := llm.Lookup("google", "gemini-2.5-flash")
	return m
}

func ask(s string) *llm.Request { return providertest.Ask(model(), s) }

// tested is the client as the shared tests of providertest see it.
var tested = &providertest.Client{
	Name: "google", // the default provider name starts every error
	New: func(o llm.ClientOptions) llm.Provider {
		o.BaseURL += "/v1beta"
		return &Client{ClientOptions: o}
	},
	Key:      testKey,
	Model:    model(),
	API:      llm.APIGoogle,
	Provider: "google",
	Wire:     api,
	Whole:    textBody,
	Partial: func(pieces ...string) string {
		var body string
		for _, p := range pieces {
			body += chunkOf(text(p), "", nil)
		}
		return body
	},
}

// parse runs the parser over body in memory.
func parse(body []byte) *llm.Stream {
	m := model()
	p := &parser{dec: sse.NewDecoder(bytes.NewReader(body)), model: &m, wire: &httpcall.Call{Provider: DefaultProvider}, nonce: "test"}
	return llm.NewStream(llm.Message{Role: llm.Assistant, Provider: DefaultProvider}, p.fill, nil)
}
