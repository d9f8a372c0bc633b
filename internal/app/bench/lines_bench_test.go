package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/jsonl"
)

// defaultModeOutput is what rally writes for an answer of n deltas in the
// default event mode: n message_update lines, the i-th holding the i
// words so far (the output grows with the square of the answer).
func defaultModeOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(`{"assistantMessageEvent":{"delta":" w","type":"text_delta"},"message":{"content":[{"text":"`)
		b.WriteString(strings.Repeat(" word12345", i))
		b.WriteString(`","type":"text"}],"role":"assistant"},"type":"message_update"}` + "\n")
	}
	b.WriteString(`{"type":"agent_settled"}` + "\n")
	return b.Bytes()
}

// pipeReads hands out at most 64 KiB a read, as a pipe does.
type pipeReads struct{ r *bytes.Reader }

func (p pipeReads) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), 64<<10)]) }

// BenchmarkReadOutput is the bench's own CPU for reading an agent's
// default-mode output (3,000 deltas, 45 MB, lines up to 30 KB, in reads
// of at most 64 KiB as from a pipe), per byte: "plain" counts the lines
// of a 1 MiB-buffered read, the floor; "jsonl" is the line reader the
// bench used before lines.go; "lines" is what it uses.
//
//	go test -run '^$' -bench ReadOutput -cpu 1 ./internal/app/bench
func BenchmarkReadOutput(b *testing.B) {
	const n = 3000
	out := defaultModeOutput(n)
	readers := []struct {
		name string
		read func(io.Reader) int
	}{
		{"plain", func(r io.Reader) int {
			buf, n := make([]byte, 1<<20), 0
			for {
				k, err := r.Read(buf)
				n += bytes.Count(buf[:k], []byte{'\n'})
				if err != nil {
					return n
				}
			}
		}},
		{"jsonl", func(r io.Reader) int {
			lr, n := jsonl.NewReader(r, maxLine), 0
			for {
				l, err := lr.Next()
				if err != nil {
					return n
				}
				if lineType(l) == "message_update" {
					n++
				}
			}
		}},
		{"lines", func(r io.Reader) int {
			l, n := newLines(r, maxLine), 0
			for {
				t, err := l.nextType()
				if err != nil {
					return n
				}
				if t == "message_update" {
					n++
				}
			}
		}},
	}
	for _, rd := range readers {
		b.Run(rd.name, func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if got := rd.read(pipeReads{bytes.NewReader(out)}); got < n {
					b.Fatalf("%d lines", got)
				}
			}
		})
	}
}
