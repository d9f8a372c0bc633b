package redact

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestEchoAtTheKeysEnds: an echo of exactly the first or the last 8 bytes
// of a key, or of a whole 8-byte key, is redacted. Bug caught (issue 30):
// the last 8-byte window of each key left out of the filter, so an echo
// of just a key's tail went out in the clear; every longer echo has
// another window and still hid it.
func TestEchoAtTheKeysEnds(t *testing.T) {
	for _, tt := range []struct{ name, in, key, want string }{
		{"last eight", "key ends 56789999.", bareKey, "key ends [redacted]."},
		{"first eight", "key starts zzSECRET.", bareKey, "key starts [redacted]."},
		{"whole eight-byte key", "key is 8bytekey.", "8bytekey", "key is [redacted]."},
		// Bugs caught (surviving mutants): the text's last window, or a
		// text of just 8 bytes, never compared.
		{"at the text's end", "key ends 56789999", bareKey, "key ends [redacted]"},
		{"the whole text", "zzSECRET", bareKey, "[redacted]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Secrets(tt.in, tt.key); got != tt.want {
				t.Errorf("Secrets(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestLineCutPastTheLimit: a line of exactly 160 runes is kept whole; one
// more is cut with "…". Bug caught (a surviving mutant): cutting at the
// limit, which marked a whole line as cut.
func TestLineCutPastTheLimit(t *testing.T) {
	exact := strings.Repeat("é", 160)
	if got := Line(exact); got != exact {
		t.Errorf("160 runes: %q", got)
	}
	if got := Line(exact + "x"); got != exact+"…" {
		t.Errorf("161 runes: %q", got)
	}
}

// TestHeaderEverySecretValue: a header whose only value holds a key is
// redacted, and one without a secret is returned as it is, not copied.
// Bug caught (a surviving mutant): the test for a secret value negated,
// which left a header of only secret values in the clear (the other
// tests always had a clean value beside the secret one).
func TestHeaderEverySecretValue(t *testing.T) {
	got := Header(http.Header{"X-Debug": {"auth=Bearer " + openaiKey}}, openaiKey)
	if v := got.Get("X-Debug"); v != "auth=Bearer "+Redacted {
		t.Errorf("redacted header %q", v)
	}
	clean := http.Header{"X-Request-Id": {"req_1"}}
	if got := Header(clean, openaiKey); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(clean).UnsafePointer() {
		t.Error("a header without a secret was copied")
	}
}

// TestKeyShapedEdges: a key-shaped token right after a prefix too short
// to be one, and tokens holding 'z' and 'Z', the last letters of the key
// alphabet, are redacted. Bugs caught (surviving mutants): the scan
// skipping the byte after a short run, and the letter ranges ending one
// short, which cut a key at its first z.
func TestKeyShapedEdges(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"after a short run", "sk-1 sk-qwertyuiop", "sk-1 [redacted]"},
		{"lower z", "x sk-zzzzzzzzzz y", "x [redacted] y"},
		{"upper Z", "x sk-ZZZZZZZZZZ y", "x [redacted] y"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Secrets(tt.in); got != tt.want {
				t.Errorf("Secrets(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
