// Package termsafe makes text that rally did not write itself (a model's
// answer, a provider's error body, a tool name, a prompt or model name from
// a session file, a reason read from Redis) safe to show on a terminal.
//
// A terminal obeys control characters in what it prints: ESC ] 52 writes
// the clipboard, ESC ] 0 sets the window title, ESC [ 2 J clears the
// screen, and bidi controls (U+202E) make text read differently from what
// it is. String replaces each C0 and C1 control except newline and tab
// with a visible stand-in, and each bidi control too, so the text shows
// what it holds and the terminal does nothing. It is the one function for
// this: print mode, the listings, the error line and the terminal UI all
// call it.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every control made visible: a C0 control as its
// Unicode control picture (ESC as ␛, BEL as ␇, CR as ␍), DEL as ␡, a C1
// or bidi control as <U+XXXX>, a byte that is not UTF-8 as <XX>. Newline and
// tab stay. Text without any comes back as it is, without a copy.
func String(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			// Not UTF-8: a raw 0x9B is CSI to some terminals.
			fmt.Fprintf(&b, "<%02X>", s[0])
		case !unsafe(r):
			b.WriteString(s[:n])
		case r < 0x20:
			b.WriteRune(0x2400 + r) // the control pictures block
		case r == 0x7f:
			b.WriteRune('\u2421')
		default:
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
		s = s[n:]
	}
	return b.String()
}

// firstUnsafe is the byte offset of the first rune String changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r) || (r == utf8.RuneError && n == 1) {
			return i
		}
		i += n
	}
	return -1
}

// Unsafe reports whether String would replace r: a C0 control but LF and
// tab, DEL, a C1 control or a bidi control. An editor that drops such
// runes from what it is given uses it, rather than a rule of its own.
func Unsafe(r rune) bool { return unsafe(r) }

func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true // C0 and DEL
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true // C1, CSI (U+009B) among them
	}
	return bidi(r)
}

// bidi reports the explicit directional controls: embeddings and overrides
// (U+202A–U+202E), isolates (U+2066–U+2069), marks (U+200E, U+200F) and
// the Arabic letter mark (U+061C).
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
