package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// oneEvent is a reader that returns one event per Read, as a model
// streaming slowly does, and then io.EOF.
type oneEvent struct{ events []string }

func (r *oneEvent) Read(p []byte) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.events[0])
	r.events[0] = r.events[0][n:]
	if r.events[0] == "" {
		r.events = r.events[1:]
	}
	return n, nil
}

// TestBufferFitsTheStream: a slow stream (an event per read, as thousands
// of sessions waiting on their model stream) keeps the small first buffer,
// and a fast one (reads that fill the buffer) grows it to read in large
// blocks (issue 25: heap per streaming session, CPU per delta).
func TestBufferFitsTheStream(t *testing.T) {
	event := `data: {"choices":[{"index":0,"delta":{"content":"scale scale"},"finish_reason":null}]}` + "\n\n"
	for _, tc := range []struct {
		name     string
		r        io.Reader
		min, max int
	}{
		{"slow", &oneEvent{events: strings.Split(strings.Repeat(event+"|", 200), "|")[:200]}, 1, 1 << 10},
		{"fast", bytes.NewReader([]byte(strings.Repeat(event, 2000))), fastBuf, 2 * fastBuf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.r)
			n := 0
			for {
				_, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n == 0 {
				t.Fatal("no events")
			}
			if l := len(d.buf); l < tc.min || l > tc.max {
				t.Errorf("after %d events the buffer is %d bytes, want %d to %d", n, l, tc.min, tc.max)
			}
		})
	}
}
