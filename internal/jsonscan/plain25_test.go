package jsonscan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// special is the byte-at-a-time rule plainHigh stands for.
func special(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

// TestPlainWord: every byte value at every position of a word, and
// random words, against the one-byte rule: a word plainHigh passes over whole
// holds none of the bytes Str stops at.
func TestPlainWord(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if got, want := plainEnd(w, 0) == 8, !special(byte(c)); got != want {
				t.Errorf("byte %#x at %d: plainHigh passes whole %v, want %v", c, pos, got, want)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var w [8]byte
		want := true
		for i := range w {
			w[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				w[i] |= 0x20 // plain bytes more often, so words of only plain ones come up
			}
			want = want && !special(w[i])
		}
		if got := plainEnd(w[:], 0) == 8; got != want {
			t.Fatalf("%q: plainHigh passes whole %v, want %v", w, got, want)
		}
	}
}

// TestStrLongRuns: a string's end, escapes and control characters are
// found wherever they fall across the eight-byte steps.
func TestStrLongRuns(t *testing.T) {
	for n := range 40 {
		for _, tc := range []struct {
			name, mid string
			ok, esc   bool
		}{
			{"plain", "", true, false},
			{"escape", `\n`, true, true},
			{"unicode escape", `\u00e9`, true, true},
			{"control", "\x01", false, false},
			{"bad escape", `\x`, false, false},
			{"utf-8", "é", true, false},
		} {
			body := strings.Repeat("a", n) + tc.mid + strings.Repeat("b", 39-n)
			s := New([]byte(`"` + body + `",1`))
			raw, esc, ok := s.Str()
			if ok != tc.ok || ok && (string(raw) != body || esc != tc.esc || !s.Eat(',')) {
				t.Errorf("%s after %d bytes: %q esc %v ok %v", tc.name, n, raw, esc, ok)
			}
		}
	}
	if s := New([]byte(`"` + strings.Repeat("a", 23))); func() bool { _, _, ok := s.Str(); return ok }() {
		t.Error("a string without its closing quote read")
	}
}

// plainEnd is where plainHigh stops, for the tests of that alone.
func plainEnd(b []byte, j int) int {
	j, _ = plainHigh(b, j)
	return j
}
