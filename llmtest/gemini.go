package llmtest

import (
	"encoding/json"
	"net/http"
)

// geminiWire writes Gemini streamGenerateContent?alt=sse streams: "data:"
// lines framed with CRLF as Google sends them, no event names, no [DONE];
// the finishReason and full usageMetadata ride on the last chunk.
type geminiWire struct{}

func (geminiWire) header(h http.Header, _ *reply, stream bool) {
	if stream {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/json; charset=UTF-8")
	}
	h.Set("Server", "scaffolding on HTTPServer2")
	h.Set("Vary", "Origin, X-Origin, Referer")
}

func geminiFrame(v any) frame {
	return frame{b: append(append([]byte("data: "), mustJSON(v)...), "\r\n\r\n"...), delta: true}
}

func (geminiWire) reply(r *reply) []frame {
	var parts []obj
	for _, p := range r.thinking {
		parts = append(parts, obj{{"text", p}, {"thought", true}})
	}
	for _, p := range r.text {
		parts = append(parts, obj{{"text", p}})
	}
	for i := range r.tools {
		// One call per chunk, as Gemini 3 sends them.
		parts = append(parts, geminiCall(r, i))
	}
	u := r.usage
	fs := make([]frame, 0, len(parts))
	for i, p := range parts {
		cand := obj{{"content", obj{{"parts", []any{p}}, {"role", "model"}}}}
		usage := obj{{"promptTokenCount", u.Input + u.CacheRead}, {"totalTokenCount", u.Input + u.CacheRead}}
		if i == len(parts)-1 {
			cand = append(cand, kv{"finishReason", geminiStop(r.stop)})
			usage = geminiUsage(u)
		}
		cand = append(cand, kv{"index", 0})
		fs = append(fs, geminiFrame(obj{
			{"candidates", []any{cand}},
			{"usageMetadata", usage},
			{"modelVersion", r.model},
			{"responseId", r.id("")},
		}))
	}
	return fs
}

func geminiStop(s string) string {
	switch s {
	case "stop", "toolUse":
		// Gemini ends a function-call turn with a plain STOP.
		return "STOP"
	case "length":
		return "MAX_TOKENS"
	}
	return s
}

func geminiObject(e errSpec, details bool) obj {
	o := obj{{"code", e.status}, {"message", e.message}, {"status", e.typ}}
	if details && len(e.details) > 0 {
		o = append(o, kv{"details", e.details})
	}
	return obj{{"error", o}}
}

// failure is an error object on a data line. No real capture of one
// inside an alt=sse stream is known; this is the shape Google's HTTP
// errors have, which is what clients look for.
func (geminiWire) failure(_ *reply, e errSpec, body string, _ int) []frame {
	if body != "" {
		return []frame{{b: []byte("data: " + body + "\r\n\r\n")}}
	}
	f := geminiFrame(geminiObject(e, false))
	f.delta = false
	return []frame{f}
}

func (geminiWire) errorBody(e errSpec, _ *reply) []byte {
	return append(prettyJSON(geminiObject(e, true), "  "), '\n')
}

// whole is a :generateContent answer: one candidate holding every part
// (the thought and the text each in one piece), finishReason and the
// full usageMetadata.
func (geminiWire) whole(r *reply) []byte {
	var parts []any
	if len(r.thinking) > 0 {
		parts = append(parts, obj{{"text", r.thought()}, {"thought", true}})
	}
	if len(r.text) > 0 {
		parts = append(parts, obj{{"text", r.fullText()}})
	}
	for i := range r.tools {
		parts = append(parts, geminiCall(r, i))
	}
	return append(prettyJSON(obj{
		{"candidates", []any{obj{
			{"content", obj{{"parts", parts}, {"role", "model"}}},
			{"finishReason", geminiStop(r.stop)},
			{"index", 0},
		}}},
		{"usageMetadata", geminiUsage(r.usage)},
		{"modelVersion", r.model},
		{"responseId", r.id("")},
	}, "  "), '\n')
}

// geminiCall is tool i as a functionCall part: args as an object, whole;
// an id only when the script gave one (Gemini 2.x sends none).
func geminiCall(r *reply, i int) obj {
	t := r.tools[i]
	call := obj{{"name", t.name}, {"args", json.RawMessage(t.args)}}
	if t.id != "" {
		call = append(call, kv{"id", r.toolID("", i)})
	}
	return obj{{"functionCall", call}}
}

// geminiUsage is the usageMetadata of a finished answer.
func geminiUsage(u Usage) obj {
	usage := obj{
		{"promptTokenCount", u.Input + u.CacheRead},
		{"candidatesTokenCount", u.Output},
		{"totalTokenCount", u.Input + u.CacheRead + u.Output},
	}
	if u.CacheRead > 0 {
		usage = append(usage, kv{"cachedContentTokenCount", u.CacheRead})
	}
	return usage
}
