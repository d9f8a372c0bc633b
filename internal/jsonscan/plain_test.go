package jsonscan

import (
	"bytes"
	"fmt"
	"testing"
)

// TestPlainFindsFirstSpecialByte: plain, which reads eight bytes at a
// time, stops at exactly the first quote, backslash or control byte, at
// every offset of a word and after any plain byte, including the ones
// next to the special bytes in value (0x1f, 0x21, 0x5b, 0x5d) and the
// bytes of UTF-8 (0x80–0xff), which the word arithmetic could mistake.
func TestPlainFindsFirstSpecialByte(t *testing.T) {
	fillers := []byte{'a', ' ', 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x01 + '"', 0x20}
	specials := []byte{'"', '\\', 0x00, 0x01, 0x0a, 0x1f}
	for _, f := range fillers {
		for _, sp := range specials {
			for at := range 20 {
				b := bytes.Repeat([]byte{f}, 24)
				b[at] = sp
				b[at+1] = sp // a second one after it must not matter
				t.Run(fmt.Sprintf("%#x/%#x/%d", f, sp, at), func(t *testing.T) {
					for from := 0; from <= at; from++ {
						if got := plain(b, from); got != at {
							t.Fatalf("plain(%x, %d) = %d, want %d", b, from, got, at)
						}
					}
				})
			}
		}
		if got := plain(bytes.Repeat([]byte{f}, 19), 0); got != 19 {
			t.Errorf("plain of 19 × %#x = %d, want 19", f, got)
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
