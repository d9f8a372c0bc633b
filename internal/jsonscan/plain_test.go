package jsonscan

import (
	"bytes"
	"testing"
)

// TestPlainFindsFirstSpecialByte: plainHigh, which reads eight bytes at a
// time, stops at exactly the first quote, backslash or control byte, at
// every offset of a word and after any plain byte, including the ones
// next to the special bytes in value (0x1f, 0x21, 0x5b, 0x5d) and the
// bytes of UTF-8 (0x80–0xff), which the word arithmetic could mistake.
func TestPlainFindsFirstSpecialByte(t *testing.T) {
	checkStops(t, plainEnd, []byte{'a', ' ', 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x01 + '"', 0x20}, []byte{'"', '\\', 0x00, 0x01, 0x0a, 0x1f})
}

// checkStops: scan, a byte scan that reads eight bytes at a time, stops
// at exactly the first of stops after any run of one of fillers, placed
// at every offset of a word and from every start before it (a second
// stop byte after the first must not matter), and runs to the end of a
// slice of fillers alone.
func checkStops(t *testing.T, scan func([]byte, int) int, fillers, stops []byte) {
	t.Helper()
	for _, f := range fillers {
		for _, sp := range stops {
			for at := range 20 {
				b := bytes.Repeat([]byte{f}, 24)
				b[at], b[at+1] = sp, sp
				for from := 0; from <= at; from++ {
					if got := scan(b, from); got != at {
						t.Fatalf("scan(%x, %d) = %d, want %d", b, from, got, at)
					}
				}
			}
		}
		if got := scan(bytes.Repeat([]byte{f}, 19), 0); got != 19 {
			t.Errorf("scan of 19 × %#x = %d, want 19", f, got)
		}
	}
}

// TestKeyAcceptsOnlyPlainLowercase: key reads a key in one pass over
// its bytes, so each byte it must refuse (encoding/json matches keys
// case-insensitively and decodes escapes) is checked at the start, in
// the middle and at the end of a key.
func TestKeyAcceptsOnlyPlainLowercase(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"content":1`, "content", true},
		{`"finish_reason" : 1`, "finish_reason", true},
		{`"a1_":1`, "a1_", true},
		{`"":1`, "", true},
		{`"Content":1`, "", false},
		{`"conTent":1`, "", false},
		{`"contenT":1`, "", false},
		{`"con\u0074ent":1`, "", false},
		{`"con\"t":1`, "", false},
		{"\"con\x01t\":1", "", false},
		{`"con-t":1`, "", false},
		{"\"cont\xc3\xa9\":1", "", false},
		{`"content"1`, "", false},
		{`"content`, "", false},
		{`content:1`, "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s := New([]byte(tc.in))
			k, ok := s.key()
			if ok != tc.ok || ok && string(k) != tc.want {
				t.Fatalf("key = %q, %v; want %q, %v", k, ok, tc.want, tc.ok)
			}
		})
	}
}
