// Package redact keeps API keys out of text that rally shows, stores or
// sends: provider error bodies and headers, transport errors, usage-limit
// marks. It is the one redactor; every caller uses it, so a key that one
// path would hide cannot leak through another.
//
// Secrets hides two kinds of secret:
//
//   - Echoes of a known key. Any run of 8 or more bytes that also occurs in
//     one of the given keys is secret, wherever it appears, so a provider
//     that echoes a key partly ("zzSECRETRALLYK***999", a prefix with no
//     well-known shape) leaks nothing. The rest of the word around such a
//     run (its adjacent letters, digits and "-_*") goes too: a masked echo
//     shows more of the key around its mask. Keys shorter than 8 bytes are
//     ignored, as hiding them would hide ordinary words.
//   - Key-shaped tokens: a well-known key prefix (sk-, sk_, AIza, gsk_,
//     xai-, pk-, rk-) at the start of a word, followed by 8 or more key
//     characters (letters, digits, "-", "_", "*"), even when the key is
//     not one of ours (a proxy echoing the upstream key) or is masked
//     ("sk-abc***xyz").
//
// Each secret span becomes Redacted.
package redact

import (
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a secret.
const Redacted = "[redacted]"

// minRun is the shortest run of a known key that counts as an echo of it.
// It is also the width of the windows compared, one uint64 each.
const minRun = 8

// keyPrefixes start the API keys of well-known providers.
var keyPrefixes = []string{"sk-", "sk_", "AIza", "gsk_", "xai-", "pk-", "rk-"}

// Secrets returns text with every echo of keys, whole or partial, and
// every key-shaped token replaced by Redacted (see the package
// documentation). Text without a secret is returned as it is, without
// allocating.
func Secrets(text string, keys ...string) string {
	known := echoes(text, keys)
	shaped := keyShaped(text)
	if len(known) == 0 && len(shaped) == 0 {
		return text
	}
	return replace(text, union(known, shaped))
}

// Line is Secrets for text shown or stored as one short line: whitespace
// runs fold to one space and the result is cut to 160 runes, with "…" when
// something was cut. It is what usage-limit marks keep as their reason.
func Line(text string, keys ...string) string {
	s := strings.Join(strings.Fields(Secrets(text, keys...)), " ")
	const max = 160
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// Header returns h, or a redacted copy if a value holds a secret (a proxy
// may echo the key in a header). h itself is never changed.
func Header(h http.Header, keys ...string) http.Header {
	for _, v := range h {
		for _, x := range v {
			if Secrets(x, keys...) != x {
				return redactAll(h, keys)
			}
		}
	}
	return h
}

func redactAll(h http.Header, keys []string) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		for _, x := range v {
			out[k] = append(out[k], Secrets(x, keys...))
		}
	}
	return out
}

// URLError keeps secrets out of a transport error: a *url.Error quotes the
// request URL, which may carry a key in its query for some proxies. Any
// other error, and a *url.Error without a secret, is returned unchanged.
func URLError(err error, keys ...string) error {
	if ue, ok := err.(*url.Error); ok {
		if red := Secrets(ue.URL, keys...); red != ue.URL {
			return &url.Error{Op: ue.Op, URL: red, Err: ue.Err}
		}
	}
	return err
}

// span is the secret text[start:end].
type span struct{ start, end int }

// grams is a Bloom-like filter of the 8-byte windows of the keys: a window
// whose bit is clear is in no key. A set bit is confirmed against the keys
// themselves, so a collision costs time, never a wrong answer. 2^14 bits
// keep collisions near 1% for a handful of 60-byte keys.
type grams [1 << 14 / 64]uint64

func gramBit(w uint64) (word int, bit uint64) {
	h := (w * 0x9E3779B97F4A7C15) >> (64 - 14)
	return int(h >> 6), 1 << (h & 63)
}

// window is s[i:i+minRun] as one number, little-endian.
func window(s string, i int) uint64 {
	s = s[i : i+minRun]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// echoes returns, in order and merged, the spans of text that are runs of
// minRun or more bytes of a key, widened to the word around them.
func echoes(text string, keys []string) []span {
	if len(text) < minRun {
		return nil
	}
	var g grams
	long := false
	for _, k := range keys {
		if len(k) < minRun {
			continue
		}
		long = true
		for i := 0; i+minRun <= len(k); i++ {
			w, b := gramBit(window(k, i))
			g[w] |= b
		}
	}
	if !long {
		return nil
	}
	var out []span
	for i := 0; i+minRun <= len(text); i++ {
		// A window inside the last span adds nothing, and one that overlaps
		// it only moves its end: that span already reaches back to the
		// start of its word. Widening only what is new keeps the pass
		// linear however long the word.
		n := len(out)
		if n > 0 && i+minRun <= out[n-1].end {
			i = out[n-1].end - minRun
			continue
		}
		w, b := gramBit(window(text, i))
		if g[w]&b == 0 || !inAny(keys, text[i:i+minRun]) {
			continue
		}
		end := i + minRun
		for end < len(text) && isKeyByte(text[end]) {
			end++
		}
		if n > 0 && i <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, end)
			continue
		}
		start := i
		for start > 0 && isKeyByte(text[start-1]) {
			start--
		}
		out = append(out, span{start, end})
	}
	return out
}

func inAny(keys []string, w string) bool {
	for _, k := range keys {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// keyShaped returns, in order, the spans of text that are key-shaped
// tokens.
func keyShaped(text string) []span {
	var out []span
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case 's', 'A', 'g', 'x', 'p', 'r':
		default:
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			continue
		}
		p := prefixAt(text, i)
		if p == 0 {
			continue
		}
		j := i + p
		for j < len(text) && isKeyByte(text[j]) {
			j++
		}
		if j-(i+p) >= minRun {
			out = append(out, span{i, j})
		}
		i = j - 1 // a run too short to be a key holds no longer one
	}
	return out
}

func prefixAt(s string, i int) int {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s[i:], p) {
			return len(p)
		}
	}
	return 0
}

// isKeyByte reports whether c can be part of a key as providers write
// them, masks ("*") included.
func isKeyByte(c byte) bool {
	return c == '-' || c == '*' || isWordByte(c)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// union merges two ordered span lists into one, joining spans that
// overlap or touch.
func union(a, b []span) []span {
	out := make([]span, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var s span
		if len(b) == 0 || len(a) > 0 && a[0].start <= b[0].start {
			s, a = a[0], a[1:]
		} else {
			s, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// replace returns text with each of the ordered, disjoint spans replaced
// by Redacted.
func replace(text string, spans []span) string {
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s.start])
		b.WriteString(Redacted)
		at = s.end
	}
	b.WriteString(text[at:])
	return b.String()
}
