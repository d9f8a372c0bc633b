package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// This file answers what is not a stream: requests that ask for no
// stream, GET …/models, and bodies that are not JSON.

// whole answers a request that asked for no stream with one JSON body, in
// the API's shape. The step's faults keep their meaning where a plain
// response can have it: Drop cuts the body short, Stall sends no header at
// all (the provider is "still thinking"), and ErrorEvent, having no stream
// to go into, becomes the HTTP error it stands for. Delay is slept once
// for every chunk the stream would have had, before anything is sent.
func (x *exchange) whole() {
	st := &x.st
	fault := st.fault()
	if fault == ErrorEvent {
		if st.Error == "" {
			st.Error = Overloaded
		}
		if st.Body != "" && !json.Valid([]byte(st.Body)) {
			st.Body = "" // an in-stream payload that is no JSON body
		}
		x.httpError()
		return
	}
	if st.Delay > 0 && !x.wait(st.Delay*time.Duration(x.rp.pieces()), 0) {
		return
	}
	if fault == Stall {
		x.set("stall before headers")
		select {
		case <-x.r.Context().Done():
		case <-x.s.done:
			abort(x.w, false)
		}
		return
	}
	body := x.api.wire().whole(x.rp)
	h := x.w.Header()
	x.api.wire().header(h, x.rp, false)
	for k, v := range st.Header {
		h.Set(k, v)
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if fault == Drop {
		x.set("drop mid-body")
		x.w.WriteHeader(http.StatusOK)
		_, _ = x.w.Write(body[:len(body)/2])
		_ = http.NewResponseController(x.w).Flush()
		abort(x.w, false)
		return
	}
	x.set("ok")
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(body)
}

// isModels reports a model-list request: GET on a path ending in /models.
func isModels(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models")
}

// models lists the Server's models in the shape the client expects:
// Gemini's for a /v1beta path or a Google key, Anthropic's for a request
// with anthropic-version or x-api-key, else OpenAI's (which every
// OpenAI-compatible server serves). created is a fixed date: it is when
// the model was made, not the time of the request.
func (x *exchange) models() {
	ids := x.s.Models
	if len(ids) == 0 {
		ids = []string{DefaultModel}
	}
	const created = 1767225600 // 2026-01-01T00:00:00Z
	var body []byte
	where, _ := credential(x.r)
	list := make([]any, len(ids))
	switch {
	case strings.Contains(x.r.URL.Path, "/v1beta/") || where == "x-goog-api-key" || where == "key":
		for i, id := range ids {
			list[i] = obj{
				{"name", "models/" + id},
				{"version", "001"},
				{"displayName", id},
				{"inputTokenLimit", 1048576},
				{"outputTokenLimit", 65536},
				{"supportedGenerationMethods", []any{"generateContent", "streamGenerateContent"}},
			}
		}
		body = append(prettyJSON(obj{{"models", list}}, "  "), '\n')
	case x.r.Header.Get("anthropic-version") != "" || where == "x-api-key":
		for i, id := range ids {
			list[i] = obj{{"type", "model"}, {"id", id}, {"display_name", id}, {"created_at", time.Unix(created, 0).UTC().Format(time.RFC3339)}}
		}
		body = mustJSON(obj{{"data", list}, {"has_more", false}, {"first_id", ids[0]}, {"last_id", ids[len(ids)-1]}})
	default:
		for i, id := range ids {
			list[i] = obj{{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "llmtest"}}
		}
		body = append(prettyJSON(obj{{"object", "list"}, {"data", list}}, "  "), '\n')
	}
	x.set("models")
	x.w.Header().Set("Content-Type", "application/json")
	x.w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	_, _ = x.w.Write(body)
}

// malformed says why a body is not a request at all (nil when it is one):
// every API takes a JSON object.
func malformed(body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		if len(strings.TrimSpace(string(body))) == 0 {
			return fmt.Errorf("the body is empty")
		}
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the body is JSON but not an object")
	}
	return nil
}

func (chatWire) malformed(error) errSpec      { return openaiMalformed() }
func (responsesWire) malformed(error) errSpec { return openaiMalformed() }

func openaiMalformed() errSpec {
	return errSpec{status: 400, typ: "invalid_request_error",
		message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"}
}

func (anthropicWire) malformed(why error) errSpec {
	return errSpec{status: 400, typ: "invalid_request_error", message: "There was an error parsing the body of your request: " + why.Error()}
}

func (geminiWire) malformed(why error) errSpec {
	return errSpec{status: 400, typ: "INVALID_ARGUMENT", message: "Invalid JSON payload received. " + why.Error()}
}

// badBody answers a malformed body with 400 in the API's shape, as the
// providers do, without taking a script step: the script is for requests.
func (x *exchange) badBody(why error) {
	e := x.api.wire().malformed(why)
	body := x.api.wire().errorBody(e, x.rp)
	h := x.w.Header()
	x.api.wire().header(h, x.rp, false)
	h.Set("Content-Length", fmt.Sprint(len(body)))
	x.set("http 400 malformed body")
	x.w.WriteHeader(http.StatusBadRequest)
	_, _ = x.w.Write(body)
}
