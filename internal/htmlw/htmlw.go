// Package htmlw writes HTML pages from Go code, escaping each value for
// the place it goes the way html/template does (the same bytes, so pages
// and their tests read as before). It exists because executing a
// template reaches reflect.Value.MethodByName with a name known only at
// run time, and a binary that can do that keeps every exported method of
// every type it stores in an interface: the linker's method dead-code
// elimination is off, and rally was a third larger for four small pages.
//
// The caller writes the markup; the Writer escapes what it is given:
// Text for element content (also <title> and <textarea>), Attr for a
// double-quoted attribute value, URL, URLPath and URLQuery for the parts
// of a URL attribute. Markup never comes from a value.
package htmlw

import (
	"strconv"
	"strings"
)

// Writer accumulates a page.
type Writer struct{ b []byte }

// Bytes returns the page written so far.
func (w *Writer) Bytes() []byte { return w.b }

// Raw writes markup of rally's own, unescaped: never a value from a
// session, a settings file or a request.
func (w *Writer) Raw(s string) { w.b = append(w.b, s...) }

// Text writes s as element content (RCDATA too): & < > " ' + are
// escaped and NUL becomes U+FFFD.
func (w *Writer) Text(s string) { w.b = appendEscaped(w.b, s) }

// Attr writes s as the value of a double-quoted attribute; the quotes
// are the caller's markup. Same escaping as Text.
func (w *Writer) Attr(s string) { w.b = appendEscaped(w.b, s) }

// Int writes n in decimal.
func (w *Writer) Int(n int) { w.b = strconv.AppendInt(w.b, int64(n), 10) }

// F1 writes v with one decimal, as SVG coordinates are written.
func (w *Writer) F1(v float64) { w.b = strconv.AppendFloat(w.b, v, 'f', 1, 64) }

// URL writes s as a whole URL attribute value (href="…"): a scheme other
// than http, https or mailto (javascript:, data:) is replaced by
// "#ZgotmplZ", as html/template does, and the rest is normalized
// (bytes that cannot appear in a URL are percent-encoded) and escaped.
func (w *Writer) URL(s string) {
	if !safeScheme(s) {
		s = "#ZgotmplZ"
	}
	w.URLPath(s)
}

// URLPath writes s where it continues a URL's path after a prefix of
// the caller's (href="/sessions/…"): normalized, so a "/" or an existing
// escape stays, and escaped for the attribute.
func (w *Writer) URLPath(s string) { w.b = appendEscaped(w.b, processURL(s, true)) }

// URLQuery writes s as a query value or a fragment (href="?file=…",
// href="#e-…"): every byte but the unreserved ones is percent-encoded,
// so it cannot end the value or start another parameter.
func (w *Writer) URLQuery(s string) { w.b = appendEscaped(w.b, processURL(s, false)) }

// replacement is what html/template's HTML escaper writes for a byte;
// all are ASCII, so a byte-wise scan handles UTF-8 (and invalid UTF-8,
// passed through as html/template passes it).
var replacement = [...]string{
	0:    "\uFFFD",
	'"':  "&#34;",
	'&':  "&amp;",
	'\'': "&#39;",
	'+':  "&#43;",
	'<':  "&lt;",
	'>':  "&gt;",
}

func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if int(c) >= len(replacement) || replacement[c] == "" {
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, replacement[c]...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// safeScheme reports a URL without a scheme, or with one that only
// navigates.
func safeScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(scheme, "/") {
		return true // relative: "/x", "a/b:c"
	}
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "mailto")
}

// processURL percent-encodes s (lower-case hex, as html/template): norm
// keeps RFC 3986's reserved characters and valid escapes, for a whole
// URL or a path; otherwise only the unreserved characters stay, for a
// query value or a fragment. Quotes and parentheses are always encoded.
func processURL(s string, norm bool) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~':
			continue
		case norm && strings.IndexByte("!#$&*+,/:;=?@[]", c) >= 0:
			continue
		case norm && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s)+16)
		}
		b = append(b, s[last:i]...)
		b = append(b, '%', hex[c>>4], hex[c&15])
		last = i + 1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

const hex = "0123456789abcdef"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
