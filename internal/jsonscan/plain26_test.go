package jsonscan

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlainHighCountsOnlyItsBytes: plainHigh reports a byte past ASCII
// exactly when one lies before where it stops, at every position of a
// word and across words, and never one after it (that byte is the next
// token's, or the rest of the line's).
func TestPlainHighCountsOnlyItsBytes(t *testing.T) {
	for _, high := range []byte{0x80, 0xc3, 0xff} {
		for stop := range 20 {
			for at := range 21 {
				b := bytes.Repeat([]byte{'a'}, 24)
				b[stop] = '"'
				if at != stop {
					b[at] = high
				}
				t.Run(fmt.Sprintf("%#x/stop%d/at%d", high, stop, at), func(t *testing.T) {
					for from := 0; from <= stop; from++ {
						j, h := plainHigh(b, from)
						want := at >= from && at < stop
						if j != stop || h != want {
							t.Fatalf("plainHigh(%q, %d) = %d, %v; want %d, %v", b, from, j, h, stop, want)
						}
					}
				})
			}
		}
	}
	if j, h := plainHigh([]byte("abc\xe9"), 0); j != 4 || !h {
		t.Errorf("plainHigh to the end = %d, %v; want 4, true", j, h)
	}
}

// FuzzQuoted: Quoted reads what Str reads, and its raw is Go text as it
// stands exactly when it has no escapes and is valid UTF-8, the rule the
// readers used to check with a second pass.
func FuzzQuoted(f *testing.F) {
	for _, s := range []string{`"a"`, `"é"`, "\"\xff\"", `"a\n"`, "\"abcdefgh\xc3\xa9ijklmnop\"", "\"abcdefg\xc3\"x\xff", `"\u00e9"`, "\"\xed\xa0\x80\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := New(data), New(data)
		raw, esc, ok := a.Str()
		got, plain, gotOK := b.Quoted()
		if ok != gotOK || !bytes.Equal(raw, got) || a.Pos() != b.Pos() {
			t.Fatalf("%q: Quoted read %q, %v, Str %q, %v", data, got, gotOK, raw, ok)
		}
		if want := ok && !esc && utf8.Valid(raw); ok && plain != want {
			t.Fatalf("%q: Quoted plain %v, want %v", data, plain, want)
		}
	})
}

// FuzzFloat holds Float to strconv.ParseFloat, bit for bit (a negative
// zero too), on every number numberAt accepts.
func FuzzFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "0.000", "1.5", "0.0012345", "123456789012345", "1234567890123456", "0.1", "-2.25",
		"0.00000000000000000000001", "9007199254740993", "1e5", "1.7976931348623157e308", "100000000000000000000000", "0.30000000000000004"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, num string) {
		if numberAt([]byte(num), 0) != len(num) {
			return
		}
		s := New([]byte(num))
		var got float64
		ok := s.Float(&got)
		want, err := strconv.ParseFloat(num, 64)
		if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Float(%q) = %v (%#x), %v; strconv: %v (%#x), %v", num, got, math.Float64bits(got), ok, want, math.Float64bits(want), err)
		}
	})
}

// TestASCIIRun: asciiRun stops at exactly the first backslash or byte
// past ASCII, at every position of a word and across words, past every
// byte it must not stop at (bytes next to a backslash in value or one
// bit from it too).
func TestASCIIRun(t *testing.T) {
	checkStops(t, asciiRun, []byte{'a', 0x00, '"', 0x5b, 0x5d, 0x7f, 0x1c, 0x7c}, []byte{'\\', 0x80, 0xc3, 0xff})
}

// TestFieldsFoldAnyOrder: FieldsFold starts each key's search after the
// key matched last, and still finds every key in any order: in known's
// order, reversed, repeated, with unknown keys between, and a key that
// matches only when case is folded still fails.
func TestFieldsFoldAnyOrder(t *testing.T) {
	known := []string{"a", "bb", "ccc", "dd", "e"}
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"a":1,"bb":2,"ccc":3,"dd":4,"e":5}`, "a1 bb2 ccc3 dd4 e5 ", true},
		{`{"e":5,"dd":4,"ccc":3,"bb":2,"a":1}`, "e5 dd4 ccc3 bb2 a1 ", true},
		{`{"ccc":3,"a":1,"e":5,"bb":2,"a":6}`, "ccc3 a1 e5 bb2 a6 ", true},
		{`{"x":0,"dd":4,"yy":0,"a":1,"zzz":0}`, "dd4 a1 ", true},
		{`{"e":5,"e":6}`, "e5 e6 ", true},
		{`{"bb":2,"CCC":3}`, "", false},
		// The key expected next is compared where it lies: keys that
		// begin or end as it does, white space, a key without its
		// colon or end, an escaped spelling of it.
		{`{"a":1,"bbx":2,"ccc":3}`, "a1 ccc3 ", true},
		{`{"a":1,"b":2,"xbb":3}`, "a1 ", true},
		{` { "a" : 1 , "bb" : 2 } `, "a1 bb2 ", true},
		{`{"a":1,"bb"}`, "", false},
		{`{"a":1,"bb`, "", false},
		{`{"a":1,"b\u0062":2}`, "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s := New([]byte(tc.in))
			var got strings.Builder
			ok := s.FieldsFold(known, func(k string) bool {
				var n int
				if !s.Int(&n) {
					return false
				}
				fmt.Fprintf(&got, "%s%d ", k, n)
				return true
			})
			if ok != tc.ok || ok && got.String() != tc.want {
				t.Fatalf("FieldsFold = %q, %v; want %q, %v", got.String(), ok, tc.want, tc.ok)
			}
		})
	}
}
