package redact

import "testing"

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
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Secrets(tt.in, tt.key); got != tt.want {
				t.Errorf("Secrets(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
