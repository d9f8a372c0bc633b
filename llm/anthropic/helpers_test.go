package anthropic

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

const testKey = "sk-ant-api03-test-secret-key-0123456789"

// ev formats one server-sent event as the API writes it.
func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// Building blocks of a stream, in the API's own shapes.
func msgStart(in, cacheRead, cacheWrite, out int) string {
	return ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":%d}}}`, in, cacheRead, cacheWrite, out))
}

func blockStart(i int, block string) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
}

func textDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, providertest.Quote(s)))
}

func jsonDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, providertest.Quote(s)))
}

func thinkingDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, i, providertest.Quote(s)))
}

func signatureDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, i, providertest.Quote(s)))
}

func blockStop(i int) string {
	return ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func msgDelta(stop string, out int) string {
	return ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out))
}

var (
	ping    = ev("ping", `{"type": "ping"}`)
	msgStop = ev("message_stop", `{"type":"message_stop"}`)
)

// textBody is a whole, well-formed answer of the given text pieces.
func textBody(pieces ...string) string {
	var b strings.Builder
	b.WriteString(msgStart(25, 0, 0, 1))
	b.WriteString(blockStart(0, `{"type":"text","text":""}`))
	b.WriteString(ping)
	for _, p := range pieces {
		b.WriteString(textDelta(0, p))
	}
	b.WriteString(blockStop(0))
	b.WriteString(msgDelta("end_turn", 15))
	b.WriteString(msgStop)
	return b.String()
}

// api answers as the Messages API does.
var api = providertest.Wire{StreamType: "text/event-stream; charset=utf-8", ErrorType: "application/json", End: "\n\n"}

func client(s *providertest.Server) *Client {
	return &Client{ClientOptions: llm.ClientOptions{BaseURL: s.URL, APIKey: testKey, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}}
}

func model() llm.Model {
	m, _ := llm.Lookup("anthropic", "claude-sonnet-4-5")
	return m
}

func ask(text string) *llm.Request { return providertest.Ask(model(), text) }

// tested is the client as the shared tests of providertest see it.
var tested = &providertest.Client{
	Name:     "anthropic",
	New:      func(o llm.ClientOptions) llm.Provider { return &Client{ClientOptions: o} },
	Key:      testKey,
	Model:    model(),
	API:      llm.APIAnthropicMessages,
	Provider: "anthropic",
	Wire:     api,
	Whole:    textBody,
	Partial: func(pieces ...string) string {
		body := msgStart(5, 0, 0, 1) + blockStart(0, `{"type":"text","text":""}`)
		for _, p := range pieces {
			body += textDelta(0, p)
		}
		return body
	},
}

// parse runs the parser over body in memory, as Stream does over HTTP.
func parse(body []byte) *llm.Stream {
	m := llm.Model{ID: "claude-sonnet-4-5"}
	p := &parser{dec: sse.NewDecoder(bytes.NewReader(body)), model: &m, call: &httpcall.Call{Provider: DefaultProvider}}
	return llm.NewStream(llm.Message{Role: llm.Assistant, Provider: DefaultProvider}, p.fill, nil)
}
