package httpcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"sync/atomic"
)

// bodies holds encoded request bodies for reuse: a long conversation's
// body is megabytes, and allocating it anew for every turn would be most
// of what a turn allocates.
var bodies sync.Pool

// lastBody is the size of the last body encoded: a buffer made when the
// pool is empty (the collector empties it) starts at that size instead of
// doubling its way up to it, which would allocate the body twice over.
var lastBody atomic.Int64

// requestBody is a request body encoded into a buffer of the pool. The
// buffer goes back once the transport has closed every reader of it (it
// may read in a goroutine of its own, and read again for a retry on a
// fresh connection) and the request is over (release).
type requestBody struct {
	buf  *bytes.Buffer
	mu   sync.Mutex
	refs int // open readers, plus one until release
}

// Lister is a request body with one long list, the conversation, which
// is encoded an element at a time after the body's other fields (the
// list's own field is left out of the body's JSON, `json:"-"`).
// encoding/json builds a whole value in a buffer of its own before
// writing it out; for a long conversation that buffer would be a second
// copy of the body, grown anew whenever the garbage collector has emptied
// encoding/json's pool.
type Lister interface {
	List() (key string, items iter.Seq[any])
}

// Items is a slice's elements for Lister.List.
func Items[T any](s []T) iter.Seq[any] {
	return func(yield func(any) bool) {
		for i := range s {
			if !yield(&s[i]) {
				return
			}
		}
	}
}

func encodeBody(v any) (*requestBody, error) {
	buf, _ := bodies.Get().(*bytes.Buffer)
	if buf == nil {
		buf = bytes.NewBuffer(make([]byte, 0, lastBody.Load()+lastBody.Load()/8+512))
	}
	buf.Reset()
	enc := json.NewEncoder(buf)
	err := enc.Encode(v)
	if l, ok := v.(Lister); ok && err == nil {
		err = encodeList(buf, enc, l)
	}
	if err != nil {
		bodies.Put(buf)
		return nil, err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	lastBody.Store(int64(buf.Len()))
	return &requestBody{buf: buf, refs: 1}, nil
}

// encodeList adds l's list to the object buf holds (as Encode wrote it).
func encodeList(buf *bytes.Buffer, enc *json.Encoder, l Lister) error {
	key, items := l.List()
	b := buf.Bytes()
	if len(b) < 3 || string(b[len(b)-2:]) != "}\n" {
		return fmt.Errorf("%T is not a JSON object", l)
	}
	buf.Truncate(len(b) - 2)
	if len(b) > 3 { // not "{}\n"
		buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	buf.Write(k)
	buf.WriteString(":[")
	n := 0
	for item := range items {
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		if err := enc.Encode(item); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("]}\n")
	return nil
}

func (b *requestBody) len() int64 { return int64(b.buf.Len()) }

// reader returns a reader of the whole body, for the transport to close;
// an error once the body is released (the transport asks for it again only
// before the response headers, which is before send releases it).
func (b *requestBody) reader() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf == nil {
		return nil, errReleased
	}
	b.refs++
	r := &bodyReader{body: b}
	r.r.Reset(b.buf.Bytes())
	return r, nil
}

var errReleased = errors.New("request body already sent and released")

// release drops one reference; the last lets the buffer go (back to the
// pool if it is worth keeping). The request, and so the transport, holds
// the body and its readers for as long as the response streams: they must
// not hold the buffer too, or every streaming session keeps its whole
// request (megabytes, for a long conversation).
func (b *requestBody) release() {
	b.mu.Lock()
	b.refs--
	var buf *bytes.Buffer
	if b.refs == 0 {
		buf, b.buf = b.buf, nil
	}
	b.mu.Unlock()
	if buf != nil && buf.Cap() >= minPooled {
		bodies.Put(buf)
	}
}

// minPooled is the smallest buffer worth pooling: a short conversation's
// body costs little to allocate, and a pool of them is heap that many
// idle sessions would hold.
const minPooled = 64 << 10

// bodyReader reads a requestBody. The transport may close it from another
// goroutine than the one reading it, hence the lock.
type bodyReader struct {
	mu     sync.Mutex
	r      bytes.Reader
	body   *requestBody
	closed bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Read(p)
}

func (r *bodyReader) Close() error {
	r.mu.Lock()
	first := !r.closed
	r.closed = true
	r.r.Reset(nil) // let go of the buffer: the request keeps this reader
	r.mu.Unlock()
	if first {
		r.body.release()
	}
	return nil
}
