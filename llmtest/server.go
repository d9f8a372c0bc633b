package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Server is a fake LLM provider: an http.Handler that answers each
// request with the next step of its Script, in the wire format the request
// path asks for, and records what it saw. Request n gets Script[n-1]; past
// the end the last step repeats, and an empty Script answers every request
// with a plain text reply. Only POSTs to a known API path take a step (and
// any request does when the step is a Raw replay); a GET of …/models gets
// the model list, a body that is not a JSON object a 400 in the API's
// shape, and other requests a 404, or they go to Upstream untouched when
// one is set.
//
// A request that asks for a stream ("stream": true, Gemini's
// :streamGenerateContent) gets one; any other gets the whole answer as
// one JSON body, as the providers do.
//
// Set the exported fields before serving the first request and do not
// change them afterwards. A Server is safe for concurrent requests.
type Server struct {
	// Script is the steps, in order.
	Script []Step
	// Upstream, when set, makes the Server a fault-injecting proxy: steps
	// without a fault (and Pass steps) are forwarded to it with the body
	// and headers intact, the request path appended to Upstream's path,
	// and the answer streamed back as it arrives; fault steps are
	// answered locally.
	Upstream *url.URL
	// Log, when set, gets each finished request as a JSON line.
	Log io.Writer
	// OnRequest, when set, is called with each finished request.
	OnRequest func(Request)
	// Now is the clock for timestamps and reset times; nil is time.Now.
	Now func() time.Time
	// URL is the base URL once Start has run.
	URL string
	// Models is what GET …/models lists; empty lists DefaultModel. Any
	// model name is answered either way.
	Models []string
	// Answer, when set, makes the answer of every step that has none of
	// its own (no Text, Thinking or ToolCalls) from the text of the
	// request's last user message, in place of DefaultText: a scripted
	// server that still answers the question it was asked.
	Answer func(prompt string) string

	initOnce  sync.Once
	closeOnce sync.Once
	done      chan struct{} // closed by Close: ends stalls and delays
	proxy     *httputil.ReverseProxy

	mu     sync.Mutex
	stored map[string]*storedResponse // background responses, by id
	seq    int                        // requests seen
	next   int                        // steps taken
	// lifts holds when each usage limit with a ResetIn lifts, by step
	// index, from the first time it answered.
	lifts  map[int]time.Time
	reqs   []Request
	logErr error
}

// New returns a Server that plays script.
func New(script ...Step) *Server {
	return &Server{Script: script}
}

// maxBody bounds a request body; a real prompt is far smaller.
const maxBody = 64 << 20

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.done = make(chan struct{})
		if s.Upstream != nil {
			s.proxy = newProxy(s.Upstream)
		}
	})
}

// Close ends every stall and delay in progress, dropping those
// connections, so that an http.Server or httptest.Server holding this
// handler can shut down. Requests that arrive later are still answered,
// without delays or stalls.
func (s *Server) Close() {
	s.init()
	s.closeOnce.Do(func() { close(s.done) })
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// exchange is one request being answered.
type exchange struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	api     API
	st      Step
	matched bool // a script step answers (else 404 or pass-through)
	body    []byte
	cred    string // redacted
	rp      *reply
	i       int // index in s.reqs
	outcome string
	stored  *storedResponse // this request's background response, if any
}

// set records the outcome at once, before the client can see it happen.
func (x *exchange) set(outcome string) {
	x.outcome = outcome
	x.s.mu.Lock()
	x.s.reqs[x.i].Outcome = outcome
	x.s.mu.Unlock()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	api := APIOf(r.URL.Path)
	where, key := credential(r)
	in := readInfo(api, r.URL.Path, body)
	x := &exchange{s: s, w: w, r: r, api: api, body: body, cred: redact(key)}

	s.mu.Lock()
	s.seq++
	rec := Request{
		Seq: s.seq, Time: s.now(), Method: r.Method, Path: r.URL.Path, API: api,
		Attempt: r.Header.Get("x-rally-attempt"), AuthHeader: where, Credential: x.cred,
		Model: in.model, Messages: in.messages,
	}
	var bad error
	if readErr == nil && api != "" && r.Method == http.MethodPost {
		bad = malformed(body)
	}
	if readErr == nil && bad == nil {
		x.st, rec.Step, x.matched = s.take(api, r.Method, rec.Time)
	}
	s.reqs = append(s.reqs, rec)
	x.i = len(s.reqs) - 1
	s.mu.Unlock()
	// Deferred, so the request is logged even when the exchange ends in
	// panic(http.ErrAbortHandler).
	defer func() { s.finish(x.i, x.outcome) }()

	if s.Answer != nil && x.matched && !x.st.says() {
		x.st.Text = s.Answer(lastPrompt(body))
	}
	if x.matched && x.api == OpenAICompletions {
		x.continueFinal()
	}
	x.rp = newReply(&x.st, rec.Seq, in, len(body), rec.Time)
	if readErr != nil {
		x.set("http 413")
		http.Error(w, "llmtest: read body: "+readErr.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if bad != nil {
		x.badBody(bad)
		return
	}
	x.serve()
}

// take picks the step for a request, under s.mu.
func (s *Server) take(api API, method string, now time.Time) (st Step, num int, ok bool) {
	n := len(s.Script)
	if n > 0 {
		s.skipLifted(now)
		num = min(s.next, n-1) + 1
		st = s.Script[num-1]
	}
	raw := st.Raw != nil || st.RawFile != ""
	if !raw && (api == "" || method != http.MethodPost) {
		return Step{}, 0, false
	}
	if at, seen := s.lifts[n-1]; seen && s.next >= n && !now.Before(at) {
		// The script's last step was a limit that lifted: a plain reply.
		s.next++
		return Step{}, num, true
	}
	if st.ResetIn > 0 {
		// A limit with a reset holds its place until it lifts.
		at, seen := s.lifts[num-1]
		if !seen {
			if s.lifts == nil {
				s.lifts = map[int]time.Time{}
			}
			at = now.Add(st.ResetIn)
			s.lifts[num-1] = at
		}
		st.resetLeft = at.Sub(now)
		return st, num, true
	}
	s.next++
	return st, num, true
}

// skipLifted moves past the usage limits whose reset has come, under
// s.mu.
func (s *Server) skipLifted(now time.Time) {
	for s.next < len(s.Script) {
		at, seen := s.lifts[s.next]
		if !seen || now.Before(at) {
			return
		}
		s.next++
	}
}

func (x *exchange) serve() {
	st := &x.st
	if err := st.Validate(); err != nil {
		// A Go caller's script is not checked by LoadScript; say what is
		// wrong rather than serve something half-formed.
		x.set("invalid step")
		http.Error(x.w, err.Error(), http.StatusInternalServerError)
		return
	}
	switch f := st.fault(); {
	case !x.matched:
		switch id := storedID(x.r); {
		case id != "":
			x.resume(id)
		case x.s.proxy != nil:
			x.forward()
		case isModels(x.r):
			x.models()
		default:
			x.notFound()
		}
	case st.Raw != nil || st.RawFile != "":
		x.replay()
	case f == Reset:
		x.set("reset")
		abort(x.w, true)
	case f == HTTPError:
		x.httpError()
	case (f == NoFault || f == Pass) && x.s.proxy != nil:
		x.forward()
	case !x.rp.stream:
		x.whole()
	default:
		x.streamHeaders()
		frames := x.api.wire().reply(x.rp)
		x.keep(frames)
		x.stream(frames, http.StatusOK, "ok")
	}
}

func (x *exchange) streamHeaders() {
	h := x.w.Header()
	x.api.wire().header(h, x.rp, true)
	h.Set("Cache-Control", "no-cache")
	for k, v := range x.st.Header {
		h.Set(k, v)
	}
}

func (x *exchange) httpError() {
	kind := x.st.Error
	if kind == "" {
		kind = kindFor(x.st.Status)
	}
	e := builtin(x.api, kind, x.rp, x.cred)
	status := e.status
	if x.st.Status != 0 {
		status = x.st.Status
	}
	body := x.api.wire().errorBody(e, x.rp)
	if x.st.Body != "" {
		body = []byte(x.st.Body)
	}
	h := x.w.Header()
	x.api.wire().header(h, x.rp, false)
	for k, v := range e.header {
		h[k] = v
	}
	for k, v := range x.st.Header {
		h.Set(k, v)
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	x.set(fmt.Sprintf("http %d", status))
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)
}

func (x *exchange) notFound() {
	x.set("http 404")
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusNotFound)
	msg := fmt.Sprintf("llmtest: no LLM API at %s %s; want POST …/chat/completions, …/responses, …/messages or …/models/{model}:streamGenerateContent, or GET …/models", x.r.Method, x.r.URL.Path)
	_, _ = x.w.Write(append(mustJSON(obj{{"error", obj{{"message", msg}, {"type", "invalid_request_error"}}}}), '\n'))
}
