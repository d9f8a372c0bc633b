package termsafe

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text unchanged", "hello, 世界 🎉\n\tindented", "hello, 世界 🎉\n\tindented"},
		{"clipboard write", "a\x1b]52;c;ZXZpbA==\x07b", "a␛]52;c;ZXZpbA==␇b"},
		{"window title", "\x1b]0;pwned\x1b\\", "␛]0;pwned␛\\"},
		{"clear screen", "\x1b[2J\x1b[H", "␛[2J␛[H"},
		{"carriage return and backspace", "ok\r\bfake", "ok␍␈fake"},
		{"nul and del", "\x00\x7f", "␀␡"},
		{"c1 csi", "x\u009b2Jy", "x<U+009B>2Jy"},
		{"raw 0x9b byte", "x\x9b2Jy", "x<9B>2Jy"},
		{"legitimate replacement character stays", "a\uFFFDb", "a\uFFFDb"},
		{"right-to-left override", "invoice\u202Etxt.exe", "invoice<U+202E>txt.exe"},
		{"every bidi control", "\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C",
			"<U+202A><U+202B><U+202C><U+202D><U+2066><U+2067><U+2068><U+2069><U+200E><U+200F><U+061C>"},
		{"zero width joiner is not a control", "👩\u200D💻", "👩\u200D💻"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzString: whatever goes in, nothing a terminal obeys comes out.
func FuzzString(f *testing.F) {
	f.Add("\x1b]52;c;x\x07\u202e\x9b")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if strings.ContainsAny(out, "\x1b\x07\r\x00\u009b\u202e\u2066") || firstUnsafe(out) >= 0 {
			t.Fatalf("String(%q) = %q still holds a control", s, out)
		}
	})
}
