package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// storedResponse is a Responses answer created with "background": true.
// It goes on being generated whether or not a client reads it: after the
// first connection broke (at frame cut), generation continues at the
// step's pace (delay before every chunk), so a client that reconnects
// reads what was generated in the meantime at once and the rest as it
// comes, at the pace a plain stream has, and never anything twice.
type storedResponse struct {
	frames []frame
	cut    int // frames the first connection carried
	delay  time.Duration

	mu      sync.Mutex
	dropped time.Time // when the first connection broke; zero until then
}

// keep stores the frames of a background Responses stream, before they
// are sent, so a dropped connection can be resumed (GET with
// starting_after). The drop itself is the step's Drop fault: the
// connection breaks after After chunks while the stored response goes on.
func (x *exchange) keep(frames []frame) {
	if x.api != OpenAIResponses || !background(x.body) {
		return
	}
	sr := &storedResponse{frames: frames, cut: len(frames), delay: x.st.Delay}
	switch x.st.fault() {
	case NoFault:
	case Drop, Stall:
		sr.cut = cutAt(frames, x.st.After)
	default:
		return
	}
	x.s.mu.Lock()
	if x.s.stored == nil {
		x.s.stored = map[string]*storedResponse{}
	}
	x.s.stored[x.rp.id("resp_")] = sr
	x.s.mu.Unlock()
	x.stored = sr
}

// broke marks the moment the first connection of a stored response broke,
// before the client can see it: generation goes on from there.
func (sr *storedResponse) broke() {
	if sr == nil {
		return
	}
	sr.mu.Lock()
	if sr.dropped.IsZero() {
		sr.dropped = time.Now()
	}
	sr.mu.Unlock()
}

// background reports a request body asking for background mode.
func background(body []byte) bool {
	var b struct {
		Background bool `json:"background"`
	}
	return json.Unmarshal(body, &b) == nil && b.Background
}

// storedID is the response id of GET …/responses/{id} or POST
// …/responses/{id}/cancel, or "".
func storedID(r *http.Request) string {
	i := strings.LastIndex(r.URL.Path, "/responses/")
	if i < 0 {
		return ""
	}
	id := r.URL.Path[i+len("/responses/"):]
	if r.Method == http.MethodPost {
		id, _ = strings.CutSuffix(id, "/cancel")
	} else if r.Method != http.MethodGet {
		return ""
	}
	if id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

// resume serves GET /responses/{id}?stream=true&starting_after=N: the
// stored events after sequence number N, each when it has been generated.
// An unknown id is a 404 in OpenAI's shape, as for a response that was
// not stored; a bad starting_after a 400.
func (x *exchange) resume(id string) {
	x.s.mu.Lock()
	sr := x.s.stored[id]
	x.s.mu.Unlock()
	q := x.r.URL.Query()
	after := -1
	if v := q.Get("starting_after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			x.invalid(http.StatusBadRequest, fmt.Sprintf("Invalid 'starting_after': %q, expected a non-negative integer.", v))
			return
		}
		after = n
	}
	if sr == nil {
		x.invalid(http.StatusNotFound, fmt.Sprintf("Response with id '%s' not found.", id))
		return
	}
	if x.r.Method == http.MethodPost {
		// POST …/cancel: generation stops; the response object says so.
		x.set("cancelled")
		x.w.Header().Set("Content-Type", "application/json")
		_, _ = x.w.Write(append(mustJSON(obj{{"id", id}, {"object", "response"}, {"status", "cancelled"}, {"background", true}}), '\n'))
		return
	}
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(x.w)
	x.w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	// Recorded before the client can see the end, as every outcome is.
	x.set(fmt.Sprintf("resumed after %d", after))
	sr.broke() // a client that went idle reconnects without a drop
	sr.mu.Lock()
	ahead := time.Since(sr.dropped) // generated while nobody read
	sr.mu.Unlock()
	sent := 0
	for i, f := range sr.frames {
		if f.seq <= after {
			continue
		}
		if i >= sr.cut && f.delta && sr.delay > 0 {
			if ahead >= sr.delay {
				ahead -= sr.delay
			} else {
				if !x.wait(sr.delay-ahead, sent) {
					return
				}
				ahead = 0
			}
		}
		if _, err := x.w.Write(f.b); err != nil {
			x.set(fmt.Sprintf("client gone after %d", sent))
			return
		}
		_ = rc.Flush()
		if f.delta {
			sent++
		}
	}
}

// invalid answers with an OpenAI-shaped invalid_request_error.
func (x *exchange) invalid(status int, msg string) {
	x.set(fmt.Sprintf("http %d", status))
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	_, _ = x.w.Write(append(mustJSON(obj{{"error", obj{{"message", msg}, {"type", "invalid_request_error"}, {"param", nil}, {"code", nil}}}}), '\n'))
}
