package llmtest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// stream writes frames with the step's delay before every chunk, cutting
// the stream short for Drop, Stall and ErrorEvent. Each outcome is recorded
// before the client can observe it (the last byte, the close), so a test
// that has seen the end of a stream finds it in Requests.
func (x *exchange) stream(frames []frame, status int, okOutcome string) {
	st := &x.st
	fault := st.fault()
	// planned is the outcome if all goes to plan, recorded just before the
	// last frame goes out.
	cut, planned := len(frames), okOutcome
	if word := cutWord(fault); word != "" {
		cut = cutAt(frames, st.After)
		n := 0
		for _, f := range frames[:cut] {
			if f.delta {
				n++
			}
		}
		planned = fmt.Sprintf("%s after %d", word, n)
	}
	rc := http.NewResponseController(x.w)
	if cut == 0 {
		x.set(planned)
	}
	x.w.WriteHeader(status)
	_ = rc.Flush() // the client sees the headers at once, as from a real provider
	chunks := 0
	for i, f := range frames[:cut] {
		if f.delta && st.Delay > 0 && !x.wait(st.Delay, chunks) {
			return
		}
		if i == cut-1 {
			x.set(planned)
		}
		if _, err := x.w.Write(f.b); err != nil {
			x.set(fmt.Sprintf("client gone after %d", chunks))
			return
		}
		_ = rc.Flush()
		if f.delta {
			chunks++
		}
	}
	switch fault {
	case Drop:
		x.stored.broke()
		abort(x.w, false)
	case Stall:
		// Never longer than the client stays: the request context ends
		// when it disconnects or the server closes the connection.
		select {
		case <-x.r.Context().Done():
		case <-x.s.done:
			abort(x.w, false)
		}
	case ErrorEvent:
		kind := st.Error
		if kind == "" {
			kind = Overloaded
		}
		api := x.api
		if api == "" {
			api = OpenAICompletions // a replay on an unknown path
		}
		for _, f := range api.wire().failure(x.rp, builtin(api, kind, x.rp, x.cred), st.Body, cut) {
			if _, err := x.w.Write(f.b); err != nil {
				return
			}
		}
		_ = rc.Flush()
	}
}

// cutWord names a fault that cuts a stream short, for outcomes; "" for the
// others.
func cutWord(f Fault) string {
	switch f {
	case Drop:
		return "drop"
	case Stall:
		return "stall"
	case ErrorEvent:
		return "error event"
	}
	return ""
}

// cutAt is where a stream cut after k chunks ends: right after the k-th
// chunk, or before the first one for k == 0 (the opening events are sent).
func cutAt(frames []frame, k int) int {
	if k == 0 {
		for i, f := range frames {
			if f.delta {
				return i
			}
		}
		return len(frames)
	}
	n, after := 0, 0
	for i, f := range frames {
		if f.delta {
			n++
			after = i + 1
			if n == k {
				break
			}
		}
	}
	return after
}

// wait sleeps d unless the client leaves or the Server is closed.
func (x *exchange) wait(d time.Duration, chunks int) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-x.r.Context().Done():
		x.set(fmt.Sprintf("client gone after %d", chunks))
	case <-x.s.done:
		x.set(fmt.Sprintf("aborted after %d", chunks))
		abort(x.w, false)
	}
	return false
}

// abort ends the exchange without a proper HTTP ending. Over HTTP/1 the
// connection is hijacked and closed: with rst, SO_LINGER 0 makes it a TCP
// reset (the client reads ECONNRESET); without, the chunked body just stops
// (the client reads an unexpected EOF). Where hijacking is impossible
// (HTTP/2) the stream is reset by panic(http.ErrAbortHandler), which
// net/http handles quietly.
func abort(w http.ResponseWriter, rst bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if rst {
		c := conn
		if u, ok := c.(interface{ NetConn() net.Conn }); ok {
			c = u.NetConn() // TLS
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	_ = conn.Close()
}

// replay serves a Raw step byte for byte, one SSE event per write, so a
// parser meets the recording's own boundaries; Drop, Stall and ErrorEvent
// count events as chunks.
func (x *exchange) replay() {
	st := &x.st
	raw := st.Raw
	if raw == nil {
		var err error
		if raw, err = os.ReadFile(st.RawFile); err != nil {
			x.set("http 500")
			http.Error(x.w, "llmtest: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	h := x.w.Header()
	ct := "text/event-stream"
	if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		ct = "application/json"
	}
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-cache")
	for k, v := range st.Header {
		h.Set(k, v)
	}
	status := st.Status
	if status == 0 {
		status = http.StatusOK
	}
	x.stream(events(raw), status, "replay")
}

// events cuts raw bytes after each blank line (LF or CRLF framing); the
// pieces join back to exactly raw.
func events(raw []byte) []frame {
	var fs []frame
	for len(raw) > 0 {
		end := len(raw)
		if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
			end = i + 2
		}
		if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 && i+4 < end {
			end = i + 4
		}
		fs = append(fs, frame{b: raw[:end], delta: true})
		raw = raw[end:]
	}
	return fs
}
