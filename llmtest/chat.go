package llmtest

import "net/http"

// chatWire writes OpenAI Chat Completions streams: "data: {chunk}" lines,
// a finish chunk, an optional usage chunk with empty choices, "data: [DONE]".
type chatWire struct{}

func (chatWire) header(h http.Header, r *reply, stream bool) {
	h.Set("x-request-id", r.id("req_"))
	h.Set("openai-processing-ms", "1")
	if stream {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/json")
	}
}

func (chatWire) reply(r *reply) []frame {
	id := r.id("chatcmpl-")
	chunk := func(delta obj, finish any) frame {
		c := obj{
			{"id", id},
			{"object", "chat.completion.chunk"},
			{"created", r.now.Unix()},
			{"model", r.model},
			{"system_fingerprint", "fp_llmtest"},
			{"choices", []any{obj{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}}},
		}
		if r.includeUsage {
			// With include_usage every chunk carries "usage": null until
			// the last.
			c = append(c, kv{"usage", nil})
		}
		return sse("", c, false)
	}
	var fs []frame
	fs = append(fs, chunk(obj{{"role", "assistant"}, {"content", ""}, {"refusal", nil}}, nil))
	for _, p := range r.thinking {
		f := chunk(obj{{"reasoning_content", p}}, nil)
		f.delta = true
		fs = append(fs, f)
	}
	for _, p := range r.text {
		f := chunk(obj{{"content", p}}, nil)
		f.delta = true
		fs = append(fs, f)
	}
	for i, t := range r.tools {
		// id, type and name come once, on a first fragment with empty
		// arguments, as OpenAI sends them.
		fs = append(fs, chunk(obj{{"tool_calls", []any{obj{
			{"index", i},
			{"id", r.toolID("call_", i)},
			{"type", "function"},
			{"function", obj{{"name", t.name}, {"arguments", ""}}},
		}}}}, nil))
		for _, p := range t.pieces {
			f := chunk(obj{{"tool_calls", []any{obj{{"index", i}, {"function", obj{{"arguments", p}}}}}}}, nil)
			f.delta = true
			fs = append(fs, f)
		}
	}
	fs = append(fs, chunk(obj{}, chatStop(r.stop)))
	if r.includeUsage {
		fs = append(fs, sse("", obj{
			{"id", id},
			{"object", "chat.completion.chunk"},
			{"created", r.now.Unix()},
			{"model", r.model},
			{"system_fingerprint", "fp_llmtest"},
			{"choices", []any{}},
			{"usage", chatUsage(r.usage)},
		}, false))
	}
	return append(fs, sse("", "[DONE]", false))
}

func chatStop(s string) string {
	switch s {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "toolUse":
		return "tool_calls"
	}
	return s
}

// failure is the bare error chunk OpenAI sends inside a 200 stream; the
// stream then ends without [DONE].
func (chatWire) failure(_ *reply, e errSpec, body string, _ int) []frame {
	if body != "" {
		return []frame{sse("", body, false)}
	}
	return []frame{sse("", obj{{"error", openaiObject(e)}}, false)}
}

func (chatWire) errorBody(e errSpec, _ *reply) []byte {
	return append(prettyJSON(obj{{"error", openaiObject(e)}}, "  "), '\n')
}

// whole is a chat.completion object: the message with its content (null
// when there are only tool calls), reasoning_content when the step thinks,
// tool_calls with their arguments whole, finish_reason and usage.
func (chatWire) whole(r *reply) []byte {
	msg := obj{{"role", "assistant"}, {"content", nullable(r.fullText())}}
	if len(r.thinking) > 0 {
		msg = append(msg, kv{"reasoning_content", r.thought()})
	}
	msg = append(msg, kv{"refusal", nil}, kv{"annotations", []any{}})
	if len(r.tools) > 0 {
		calls := make([]any, len(r.tools))
		for i, t := range r.tools {
			calls[i] = obj{{"id", r.toolID("call_", i)}, {"type", "function"}, {"function", obj{{"name", t.name}, {"arguments", t.args}}}}
		}
		msg = append(msg, kv{"tool_calls", calls})
	}
	return append(prettyJSON(obj{
		{"id", r.id("chatcmpl-")},
		{"object", "chat.completion"},
		{"created", r.now.Unix()},
		{"model", r.model},
		{"choices", []any{obj{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", chatStop(r.stop)}}}},
		{"usage", chatUsage(r.usage)},
		{"system_fingerprint", "fp_llmtest"},
	}, "  "), '\n')
}

func chatUsage(u Usage) obj {
	return obj{
		{"prompt_tokens", u.Input + u.CacheRead},
		{"completion_tokens", u.Output},
		{"total_tokens", u.Input + u.CacheRead + u.Output},
		{"prompt_tokens_details", obj{{"cached_tokens", u.CacheRead}, {"audio_tokens", 0}}},
		{"completion_tokens_details", obj{{"reasoning_tokens", 0}, {"audio_tokens", 0}}},
	}
}
