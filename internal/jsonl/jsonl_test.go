package jsonl

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		in   string
		max  int
		want []string // "!" marks a line too long
	}{
		{"LF", "a\nb\n", 100, []string{"a", "b"}},
		{"CRLF loses its CR", "a\r\nb\r\n", 100, []string{"a", "b"}},
		{"lone CR is kept inside", "a\rb\n", 100, []string{"a\rb"}},
		{"U+2028 and U+2029 are not breaks", "a\u2028b\u2029c\nd\n", 100, []string{"a\u2028b\u2029c", "d"}},
		{"last line without LF", "a\nb", 100, []string{"a", "b"}},
		{"empty lines", "\n\na\n", 100, []string{"", "", "a"}},
		{"long line within the limit", long + "\n", 300, []string{long}},
		{"too long, then resync", "ok\n" + long + "\nnext\n", 100, []string{"ok", "!", "next"}},
		{"too long at EOF", "ok\n" + long, 100, []string{"ok", "!"}},
		{"invalid UTF-8 passes through", "\xff\xfe\n", 100, []string{"\xff\xfe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read and the smallest buffer: lines are put
			// together across reads and buffer refills.
			lr := &Reader{r: bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(tt.in)), 16), max: tt.max}
			var got []string
			for {
				b, err := lr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if errors.Is(err, ErrTooLong) {
					got = append(got, "!")
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
