package llmtest

import (
	"net/http"
	"strconv"
)

// responsesWire writes OpenAI Responses streams: typed events
// (response.created … response.completed), every one numbered by
// sequence_number, with no [DONE].
type responsesWire struct{}

func (responsesWire) header(h http.Header, r *reply, stream bool) {
	chatWire{}.header(h, r, stream)
}

// respWriter numbers events as it frames them.
type respWriter struct {
	r   *reply
	seq int
	fs  []frame
}

func (w *respWriter) add(typ string, delta bool, fields ...kv) {
	o := append(obj{{"type", typ}}, fields...)
	o = append(o, kv{"sequence_number", w.seq})
	f := sse(typ, o, delta)
	f.seq = w.seq
	w.seq++
	w.fs = append(w.fs, f)
}

// response is the response object the lifecycle events carry.
func (w *respWriter) response(status string, output []any, usage, err, incomplete any) obj {
	return obj{
		{"id", w.r.id("resp_")},
		{"object", "response"},
		{"created_at", w.r.now.Unix()},
		{"status", status},
		{"error", err},
		{"incomplete_details", incomplete},
		{"model", w.r.model},
		{"output", output},
		{"parallel_tool_calls", true},
		{"usage", usage},
	}
}

func (responsesWire) reply(r *reply) []frame {
	w := &respWriter{r: r}
	w.add("response.created", false, kv{"response", w.response("in_progress", []any{}, nil, nil, nil)})
	w.add("response.in_progress", false, kv{"response", w.response("in_progress", []any{}, nil, nil, nil)})
	typ, resp := w.final()
	w.add(typ, false, kv{"response", resp})
	return w.fs
}

// whole is the response object response.completed carries (or
// response.incomplete for a cut answer), on its own.
func (responsesWire) whole(r *reply) []byte {
	w := &respWriter{r: r}
	_, resp := w.final() // the events it frames on the way are not sent
	return append(prettyJSON(resp, "  "), '\n')
}

// final streams the output items and returns the closing event's type and
// the finished response.
func (w *respWriter) final() (typ string, resp obj) {
	r := w.r
	var output []any
	if len(r.thinking) > 0 {
		output = append(output, w.reasoning(len(output)))
	}
	if len(r.text) > 0 {
		output = append(output, w.message(len(output)))
	}
	for i := range r.tools {
		output = append(output, w.call(len(output), i))
	}
	if output == nil {
		output = []any{}
	}
	u := r.usage
	usage := obj{
		{"input_tokens", u.Input + u.CacheRead},
		{"input_tokens_details", obj{{"cached_tokens", u.CacheRead}}},
		{"output_tokens", u.Output},
		{"output_tokens_details", obj{{"reasoning_tokens", 0}}},
		{"total_tokens", u.Input + u.CacheRead + u.Output},
	}
	switch r.stop {
	case "stop", "toolUse":
		return "response.completed", w.response("completed", output, usage, nil, nil)
	}
	reason := r.stop
	if reason == "length" {
		reason = "max_output_tokens"
	}
	return "response.incomplete", w.response("incomplete", output, usage, nil, obj{{"reason", reason}})
}

func (w *respWriter) reasoning(out int) obj {
	id := w.r.id("rs_")
	text := w.r.thought()
	w.add("response.output_item.added", false, kv{"item", obj{{"id", id}, {"type", "reasoning"}, {"summary", []any{}}}}, kv{"output_index", out})
	w.add("response.reasoning_summary_part.added", false, kv{"item_id", id}, kv{"output_index", out},
		kv{"part", obj{{"type", "summary_text"}, {"text", ""}}}, kv{"summary_index", 0})
	for _, p := range w.r.thinking {
		w.add("response.reasoning_summary_text.delta", true, kv{"delta", p}, kv{"item_id", id}, kv{"output_index", out}, kv{"summary_index", 0})
	}
	w.add("response.reasoning_summary_text.done", false, kv{"item_id", id}, kv{"output_index", out}, kv{"summary_index", 0}, kv{"text", text})
	w.add("response.reasoning_summary_part.done", false, kv{"item_id", id}, kv{"output_index", out},
		kv{"part", obj{{"type", "summary_text"}, {"text", text}}}, kv{"summary_index", 0})
	item := obj{{"id", id}, {"type", "reasoning"}, {"summary", []any{obj{{"type", "summary_text"}, {"text", text}}}}}
	w.add("response.output_item.done", false, kv{"item", item}, kv{"output_index", out})
	return item
}

func (w *respWriter) message(out int) obj {
	id := w.r.id("msg_")
	text := w.r.fullText()
	part := func(t string) obj {
		return obj{{"type", "output_text"}, {"annotations", []any{}}, {"logprobs", []any{}}, {"text", t}}
	}
	w.add("response.output_item.added", false, kv{"item", obj{
		{"id", id}, {"type", "message"}, {"status", "in_progress"}, {"content", []any{}}, {"role", "assistant"},
	}}, kv{"output_index", out})
	w.add("response.content_part.added", false, kv{"content_index", 0}, kv{"item_id", id}, kv{"output_index", out}, kv{"part", part("")})
	for _, p := range w.r.text {
		w.add("response.output_text.delta", true, kv{"content_index", 0}, kv{"delta", p}, kv{"item_id", id}, kv{"logprobs", []any{}}, kv{"output_index", out})
	}
	w.add("response.output_text.done", false, kv{"content_index", 0}, kv{"item_id", id}, kv{"logprobs", []any{}}, kv{"output_index", out}, kv{"text", text})
	w.add("response.content_part.done", false, kv{"content_index", 0}, kv{"item_id", id}, kv{"output_index", out}, kv{"part", part(text)})
	item := obj{{"id", id}, {"type", "message"}, {"status", "completed"}, {"content", []any{part(text)}}, {"role", "assistant"}}
	w.add("response.output_item.done", false, kv{"item", item}, kv{"output_index", out})
	return item
}

// call streams tool i. The item id (fc_…) and the call_id (call_…) differ,
// as they do at OpenAI; clients must answer with call_id.
func (w *respWriter) call(out, i int) obj {
	t := w.r.tools[i]
	id := w.r.id("fc_") + "_" + strconv.Itoa(i)
	item := func(status, args string) obj {
		return obj{{"id", id}, {"type", "function_call"}, {"status", status}, {"arguments", args}, {"call_id", w.r.toolID("call_", i)}, {"name", t.name}}
	}
	w.add("response.output_item.added", false, kv{"item", item("in_progress", "")}, kv{"output_index", out})
	for _, p := range t.pieces {
		w.add("response.function_call_arguments.delta", true, kv{"delta", p}, kv{"item_id", id}, kv{"output_index", out})
	}
	w.add("response.function_call_arguments.done", false, kv{"arguments", t.args}, kv{"item_id", id}, kv{"output_index", out})
	done := item("completed", t.args)
	w.add("response.output_item.done", false, kv{"item", done}, kv{"output_index", out})
	return done
}

// failure is what OpenAI sends when a response fails mid-way: an "error"
// event whose payload nests the error, then response.failed carrying it,
// and no response.completed.
func (responsesWire) failure(r *reply, e errSpec, body string, sent int) []frame {
	w := &respWriter{r: r, seq: sent}
	code := e.code
	if code == "" {
		code = e.typ
	}
	inner := obj{{"type", e.typ}, {"code", code}, {"message", e.message}, {"param", nullable(e.param)}}
	if e.fields != nil {
		inner = e.fields
	}
	if body != "" {
		w.fs = append(w.fs, sse("error", body, false))
		w.seq++
	} else {
		w.add("error", false, kv{"error", inner})
	}
	w.add("response.failed", false, kv{"response", w.response("failed", []any{}, nil, obj{{"code", code}, {"message", e.message}}, nil)})
	return w.fs
}

func (responsesWire) errorBody(e errSpec, r *reply) []byte {
	return chatWire{}.errorBody(e, r)
}
