package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// anthropicWire writes Anthropic Messages streams: message_start, content
// blocks (start, deltas, stop) with a ping after the first start,
// message_delta with the stop reason and usage, message_stop.
type anthropicWire struct{}

func (anthropicWire) header(h http.Header, r *reply, stream bool) {
	h.Set("request-id", r.id("req_"))
	h.Set("anthropic-organization-id", "llmtest-org")
	if stream {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/json")
	}
}

func (anthropicWire) reply(r *reply) []frame {
	u := r.usage
	var fs []frame
	ev := func(typ string, delta bool, fields ...kv) {
		fs = append(fs, sse(typ, append(obj{{"type", typ}}, fields...), delta))
	}
	ev("message_start", false, kv{"message", obj{
		{"id", r.id("msg_")},
		{"type", "message"},
		{"role", "assistant"},
		{"model", r.model},
		{"content", []any{}},
		{"stop_reason", nil},
		{"stop_sequence", nil},
		{"usage", anthropicUsage(u, 1)},
	}})
	index := 0
	start := func(block obj) {
		ev("content_block_start", false, kv{"index", index}, kv{"content_block", block})
		if index == 0 {
			fs = append(fs, sse("ping", obj{{"type", "ping"}}, false))
		}
	}
	delta := func(d obj, counts bool) {
		ev("content_block_delta", counts, kv{"index", index}, kv{"delta", d})
	}
	stop := func() {
		ev("content_block_stop", false, kv{"index", index})
		index++
	}
	if len(r.thinking) > 0 {
		start(obj{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}})
		for _, p := range r.thinking {
			delta(obj{{"type", "thinking_delta"}, {"thinking", p}}, true)
		}
		delta(obj{{"type", "signature_delta"}, {"signature", anthropicSignature(r)}}, false)
		stop()
	}
	if len(r.text) > 0 {
		start(obj{{"type", "text"}, {"text", ""}})
		for _, p := range r.text {
			delta(obj{{"type", "text_delta"}, {"text", p}}, true)
		}
		stop()
	}
	for i, t := range r.tools {
		start(obj{{"type", "tool_use"}, {"id", r.toolID("toolu_", i)}, {"name", t.name}, {"input", obj{}}})
		// Anthropic's first input_json_delta is always empty.
		delta(obj{{"type", "input_json_delta"}, {"partial_json", ""}}, false)
		for _, p := range t.pieces {
			delta(obj{{"type", "input_json_delta"}, {"partial_json", p}}, true)
		}
		stop()
	}
	ev("message_delta", false,
		kv{"delta", obj{{"stop_reason", anthropicStop(r.stop)}, {"stop_sequence", nil}}},
		kv{"usage", anthropicUsage(u, u.Output)})
	ev("message_stop", false)
	return fs
}

func anthropicStop(s string) string {
	switch s {
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "toolUse":
		return "tool_use"
	}
	return s
}

func anthropicObject(e errSpec) obj {
	return obj{{"type", "error"}, {"error", obj{{"type", e.typ}, {"message", e.message}}}}
}

// failure is Anthropic's "event: error" inside the 200 stream; what was
// streamed before it stays valid, and no message_stop follows.
func (anthropicWire) failure(_ *reply, e errSpec, body string, _ int) []frame {
	if body != "" {
		return []frame{sse("error", body, false)}
	}
	return []frame{sse("error", anthropicObject(e), false)}
}

func (anthropicWire) errorBody(e errSpec, r *reply) []byte {
	return mustJSON(append(anthropicObject(e), kv{"request_id", r.id("req_")}))
}

// whole is the message object: content blocks complete (thinking with its
// signature, text, tool_use with input as an object), stop_reason, usage.
func (anthropicWire) whole(r *reply) []byte {
	content := []any{}
	if len(r.thinking) > 0 {
		content = append(content, obj{{"type", "thinking"}, {"thinking", r.thought()}, {"signature", anthropicSignature(r)}})
	}
	if len(r.text) > 0 {
		content = append(content, obj{{"type", "text"}, {"text", r.fullText()}})
	}
	for i, t := range r.tools {
		content = append(content, obj{{"type", "tool_use"}, {"id", r.toolID("toolu_", i)}, {"name", t.name}, {"input", json.RawMessage(t.args)}})
	}
	return append(mustJSON(obj{
		{"id", r.id("msg_")},
		{"type", "message"},
		{"role", "assistant"},
		{"model", r.model},
		{"content", content},
		{"stop_reason", anthropicStop(r.stop)},
		{"stop_sequence", nil},
		{"usage", anthropicUsage(r.usage, r.usage.Output)},
	}), '\n')
}

func anthropicUsage(u Usage, output int) obj {
	return obj{
		{"input_tokens", u.Input},
		{"cache_creation_input_tokens", u.CacheWrite},
		{"cache_read_input_tokens", u.CacheRead},
		{"output_tokens", output},
	}
}

// anthropicSignature lets a client send the thinking back; it is opaque
// base64 like the real one, and means nothing.
func anthropicSignature(r *reply) string {
	return base64.StdEncoding.EncodeToString([]byte("llmtest signature " + r.id("msg_")))
}
