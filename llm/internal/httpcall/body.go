package httpcall

import (
	"bytes"
	"encoding/json"
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

// reader returns a reader of the whole body, for the transport to close.
func (b *requestBody) reader() io.ReadCloser {
	b.mu.Lock()
	b.refs++
	b.mu.Unlock()
	return &bodyReader{Reader: bytes.NewReader(b.buf.Bytes()), body: b}
}

// release drops one reference; the last returns the buffer to the pool.
func (b *requestBody) release() {
	b.mu.Lock()
	b.refs--
	last := b.refs == 0
	b.mu.Unlock()
	if last && b.buf.Cap() >= minPooled {
		bodies.Put(b.buf)
	}
}

// minPooled is the smallest buffer worth pooling: a short conversation's
// body costs little to allocate, and a pool of them is heap that many
// idle sessions would hold.
const minPooled = 64 << 10

type bodyReader struct {
	*bytes.Reader
	body *requestBody
	once sync.Once
}

func (r *bodyReader) Close() error {
	r.once.Do(r.body.release)
	return nil
}
