package bench

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// update is a default-mode message_update line of about n bytes, "type"
// where rally writes it (last) or pi (first).
func update(n int, first bool) string {
	body := `"message":{"content":[{"type":"text","text":"` + strings.Repeat("w", n) + `"}]}`
	if first {
		return `{"type":"message_update",` + body + `}`
	}
	return `{` + body + `,"type":"message_update"}`
}

// TestLines reads the same output through windows of several sizes and
// reads of one byte or many: whole lines come back whole, and a line's
// type is read right whether it fits the window, spans it, or is longer
// than shortLine and kept only by its ends.
func TestLines(t *testing.T) {
	long := strings.Repeat("x", shortLine+3000)
	out := "{\"type\":\"response\",\"id\":\"1\"}\n" +
		update(10, false) + "\n" +
		update(shortLine*2, false) + "\r\n" +
		update(3*shortLine+17, true) + "\n" +
		`{"a":{"type":"inner"},"type":"middle","b":1}` + "\n" +
		"\n" +
		`{"text":"` + long + `"}` + "\n" +
		`{"type":"agent_settled"}`
	wantWhole := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	wantTypes := []string{"response", "message_update", "message_update", "message_update", "middle", "", "", "agent_settled"}
	for _, size := range []int{16, 1000, 1 << 20} {
		for _, r := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"reads as they come", func(r io.Reader) io.Reader { return r }}, {"half reads", iotest.HalfReader}} {
			t.Run(r.name+" window "+strconv.Itoa(size), func(t *testing.T) {
				l := newLinesSize(r.wrap(strings.NewReader(out)), 1<<20, size)
				whole := readAll(t, func() (string, error) {
					b, err := l.next()
					return string(b), err
				})
				if diff := cmp.Diff(wantWhole, whole); diff != "" {
					t.Errorf("next (-want +got):\n%.2000s", diff)
				}
				if l.n != int64(len(out)) {
					t.Errorf("counted %d bytes of %d", l.n, len(out))
				}
				l = newLinesSize(r.wrap(strings.NewReader(out)), 1<<20, size)
				types := readAll(t, l.nextType)
				if diff := cmp.Diff(wantTypes, types); diff != "" {
					t.Errorf("nextType (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// readAll calls read up to the end of the output and returns what it
// gave.
func readAll(t *testing.T, read func() (string, error)) []string {
	t.Helper()
	var out []string
	for {
		s, err := read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
}

// TestLinesTooLong: a line over the limit is an error, not a buffer
// that grows without end.
func TestLinesTooLong(t *testing.T) {
	l := newLinesSize(strings.NewReader(strings.Repeat("x", 5000)+"\n"), 4096, 1024)
	if _, err := l.nextType(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("nextType = %v, want errLineTooLong", err)
	}
}

// TestLinesDrain counts what is left unread.
func TestLinesDrain(t *testing.T) {
	l := newLinesSize(strings.NewReader("a\nbbbb\ncc\n"), 100, 4)
	if _, err := l.next(); err != nil {
		t.Fatal(err)
	}
	l.drain()
	if l.n != 10 {
		t.Fatalf("counted %d bytes, want 10", l.n)
	}
}
