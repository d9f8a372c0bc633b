// Package sse decodes server-sent events (the text/event-stream format of the
// WHATWG HTML standard, "Server-sent events") as LLM providers stream them.
//
//	d := sse.NewDecoder(resp.Body)
//	for {
//		ev, err := d.Next()
//		if err == io.EOF {
//			break // clean end: did the provider's terminal event arrive?
//		}
//		if err != nil {
//			return err // the body's own error, unchanged
//		}
//		handle(ev.Name, ev.Data)
//	}
//
// The parsing rules are the standard's: lines end in CRLF, LF or a lone CR; a
// leading UTF-8 byte order mark is dropped; lines starting with ":" are
// comments (keep-alives such as ": OPENROUTER PROCESSING"); a line without a
// colon is a field name with an empty value; one space after the colon is
// dropped; "data" lines are joined with "\n"; "id" sets the last event ID
// (kept until the next "id", ignored if it contains NUL); "retry" and unknown
// fields are ignored; a blank line dispatches the event. Lines have no fixed
// length limit: the buffer grows to fit the longest line, as tool-call
// arguments can be megabytes on one line.
//
// What one event may hold is capped (Decoder.MaxEvent, 64 MiB by default): an
// event whose data grows past it, or a line longer than it (plus a few bytes
// for the field name), fails the decoder with an error wrapping
// ErrEventTooLarge as soon as the excess is seen, before it is buffered, so a
// hostile or broken server cannot make the decoder hold more than about twice
// the cap however long it streams, with or without line breaks.
//
// Where rally departs from the standard, for what an LLM client needs:
//
//   - An event with an "event" name but no "data" line is dispatched (with
//     empty Data) instead of dropped, so that, say, a bare "event: error" is
//     never lost silently. A block of only comments, "id" or "retry" lines
//     still yields nothing, so keep-alives never surface.
//
//   - End of input ends the pending event instead of discarding it: if the
//     body ends after data (or a name) without the closing blank line, Next
//     returns that event with a nil error, and io.EOF on the next call. Real
//     servers do this (vLLM ends with "data: [DONE]" and no newline at all),
//     and a client must see that [DONE]. The decoder cannot tell such an end
//     from a stream cut at a line boundary, so it does not try: detecting a
//     truncated stream is the provider client's job, by the absence of its
//     protocol's terminal event ([DONE], message_stop, response.completed, a
//     finish reason). A stream cut mid-line yields a final event whose data is
//     cut too, which the client's JSON decoding rejects.
//
// A read error other than io.EOF (a reset connection, a cut chunked body's
// io.ErrUnexpectedEOF, an idle-timeout error from a wrapping reader) is
// returned unchanged, so errors.Is and errors.As see it; the event pending at
// that moment is dropped, as it cannot be known to be whole. Errors are
// sticky: every later call returns the same error.
//
// A body that is not an event stream, such as a JSON error object sent with
// the wrong content type, decodes line by line like any other input: its lines
// ("{", `  "error": {`, ...) are unknown fields, so it normally yields no
// events and then io.EOF. It never hangs the decoder, and a body with no line
// breaks is buffered only up to the cap.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	// Name is the value of the last "event" field, or "" if there was none.
	Name string
	// Data is the event's "data" lines joined with "\n". It aliases the
	// decoder's buffer and is valid only until the next call to Next; copy it
	// to keep it.
	Data []byte
	// ID is the last event ID seen on the stream so far, as the standard
	// defines it: it carries over to later events that have no "id" field.
	ID string
}

const (
	// minBuf is the first read buffer; it doubles whenever one line does
	// not fit, or a read fills it (the stream is fast: read it in larger
	// blocks, up to fastBuf), and never shrinks. A slow stream, a session
	// waiting on its model, keeps a small one.
	minBuf  = 512
	fastBuf = 32 << 10
	// maxEmptyReads bounds reads that return (0, nil), as bufio does, so a
	// broken reader cannot spin the decoder forever.
	maxEmptyReads = 100
	// maxNames bounds the cache of event names, so a hostile stream of
	// distinct names cannot grow it without limit.
	maxNames = 64
	// maxNameLen bounds the names cached, so the cache stays small
	// whatever the names' length.
	maxNameLen = 256
	// fieldSlack is what a line may hold beyond MaxEvent: its field name,
	// colon and space ("data: ").
	fieldSlack = 64
)

// DefaultMaxEvent is the cap on one event when Decoder.MaxEvent is zero:
// 64 MiB.
const DefaultMaxEvent = 64 << 20

// ErrEventTooLarge is wrapped by the error of a decoder that met an event
// bigger than its MaxEvent.
var ErrEventTooLarge = errors.New("event too large")

var (
	bom          = []byte("\xEF\xBB\xBF")
	errBadReader = errors.New("sse: reader returned an invalid count")
)

// Decoder reads events from an input stream. It is not safe for concurrent
// use.
type Decoder struct {
	// MaxEvent caps the data of one event, and any one line, in bytes
	// (see the package documentation). Zero means DefaultMaxEvent. Set it
	// before the first call to Next.
	MaxEvent int

	r    io.Reader
	buf  []byte // unread input is buf[off:n]
	off  int
	n    int
	scan int // bytes past off already searched for a line end
	// cr is where the first CR at or after off is in buf[:n], or n if
	// there is none: each byte read is searched for CR once, not once
	// for every line it is in front of (a stream framed with LF alone
	// has none, and its lines cost one search for LF).
	cr    int
	err   error // read error, reported once buf is drained
	full  bool  // the last read filled the buffer
	begun bool  // first line seen, BOM checked
	skip  bool  // last line ended in CR: an LF next is part of that line end
	data  []byte
	id    string
	names map[string]string // event names, so repeats cost no allocation
}

// NewDecoder returns a decoder that reads from r. It does its own buffering,
// so r needs none.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r}
}

// Next returns the next event. At the end of the input it returns the event
// still pending, if any, and then io.EOF. Other read errors are returned
// unchanged; see the package documentation.
func (d *Decoder) Next() (Event, error) {
	d.data = d.data[:0]
	var name string
	data := false  // a data line since the last dispatch
	named := false // an event line since the last dispatch
	for {
		line, err := d.line()
		if err != nil {
			if err == io.EOF && (data || named) {
				return Event{Name: name, Data: d.data, ID: d.id}, nil
			}
			return Event{}, err
		}
		if !d.begun {
			d.begun = true
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			if data || named {
				return Event{Name: name, Data: d.data, ID: d.id}, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, line[len(line):]
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			grown := len(d.data) + len(value)
			if data {
				grown++ // the "\n" that joins the lines
			}
			if grown > d.max() {
				return Event{}, d.tooLarge()
			}
			if grown > cap(d.data) {
				// Double, but never past the cap: append's gentler growth
				// of large slices would allocate several times the cap
				// for an event of many lines.
				grow := make([]byte, len(d.data), min(max(2*cap(d.data), grown), d.max()))
				copy(grow, d.data)
				d.data = grow
			}
			if data {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
			data = true
		case "event":
			name = d.intern(value)
			named = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 && string(value) != d.id {
				d.id = string(value)
			}
		}
	}
}

// intern returns value as a string, allocating only the first time a name
// is seen: streams repeat a handful of names thousands of times.
func (d *Decoder) intern(value []byte) string {
	if s, ok := d.names[string(value)]; ok {
		return s
	}
	s := string(value)
	if len(d.names) < maxNames && len(s) <= maxNameLen {
		if d.names == nil {
			d.names = make(map[string]string)
		}
		d.names[s] = s
	}
	return s
}

// line returns the next line without its line end. It aliases d.buf and is
// valid until the next call. A last line with no line end is returned before
// the read error that follows it.
//
// It searches for CR as well as LF itself, rather than use bufio.Reader's
// ReadSlice('\n'), so a stream framed with lone CRs is delivered as it
// arrives instead of waiting for an LF that never comes.
func (d *Decoder) line() ([]byte, error) {
	for {
		if d.skip && d.off < d.n {
			d.skip = false
			if d.buf[d.off] == '\n' {
				d.off++
			}
		}
		end := d.cr
		if i := bytes.IndexByte(d.buf[d.off+d.scan:d.cr], '\n'); i >= 0 {
			end = d.off + d.scan + i
		}
		if end < d.n {
			line := d.buf[d.off:end]
			d.off, d.scan = end+1, 0
			if d.skip = end == d.cr; d.skip {
				d.cr = d.n
				if j := bytes.IndexByte(d.buf[d.off:d.n], '\r'); j >= 0 {
					d.cr = d.off + j
				}
			}
			return line, nil
		}
		d.scan = d.n - d.off
		if d.scan > d.max()+fieldSlack && d.err == nil {
			return nil, d.tooLarge()
		}
		if d.err != nil {
			if d.off == d.n {
				return nil, d.err
			}
			line := d.buf[d.off:d.n]
			d.off, d.scan = d.n, 0
			return line, nil
		}
		d.fill()
	}
}

// max is the cap on one event.
func (d *Decoder) max() int {
	if d.MaxEvent > 0 {
		return d.MaxEvent
	}
	return DefaultMaxEvent
}

// tooLarge fails the decoder for good: the input buffered so far is
// dropped, and no more is read.
func (d *Decoder) tooLarge() error {
	d.err = fmt.Errorf("sse: %w: more than %d bytes in one event", ErrEventTooLarge, d.max())
	d.off, d.n, d.scan, d.cr = 0, 0, 0, 0
	d.data = d.data[:0]
	return d.err
}

// fill reads once more into d.buf, first sliding the unread bytes to the
// front, and growing the buffer only when they already fill it: one line
// longer than the buffer. A read error is kept in d.err.
func (d *Decoder) fill() {
	if d.off > 0 {
		d.n = copy(d.buf, d.buf[d.off:d.n])
		d.cr -= d.off
		d.off = 0
	}
	if d.n == len(d.buf) || d.full && len(d.buf) < fastBuf {
		// The buffer needs to hold one line at most, which line() fails
		// once it is longer than the cap: growing past that would only
		// hold bytes that are never used.
		// Going straight to the limit once doubling nears it saves
		// allocating a doubled buffer only to replace it.
		size := max(2*len(d.buf), minBuf)
		if limit := d.max() + fieldSlack + 1; size > limit/2 {
			size = max(limit, d.n+1)
		}
		b := make([]byte, size)
		copy(b, d.buf[:d.n])
		d.buf = b
	}
	for range maxEmptyReads {
		n, err := d.r.Read(d.buf[d.n:])
		if n < 0 || n > len(d.buf)-d.n {
			d.err = errBadReader
			return
		}
		if d.cr == d.n { // no CR known: look in what came
			d.cr = d.n + n
			if j := bytes.IndexByte(d.buf[d.n:d.n+n], '\r'); j >= 0 {
				d.cr = d.n + j
			}
		}
		d.n += n
		d.full = d.n == len(d.buf)
		if err != nil {
			d.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	d.err = io.ErrNoProgress
}
