package tui

import (
	"strings"
	"testing"
)

// The completion hint is looked up after each edit, and not after a
// cursor key, which cannot change it: a lookup gets the whole text.
func TestEditorHintAfterEdits(t *testing.T) {
	e := newEditor(newStyles(true))
	lookups := 0
	e.cands = func(in string) []string {
		lookups++
		if strings.HasPrefix(in, "/m") {
			return []string{"/model"}
		}
		return nil
	}
	e.paste("/mx")
	if lookups != 1 || e.hint != "/model" {
		t.Fatalf("paste: %d lookups, hint %q", lookups, e.hint)
	}
	for _, c := range []struct {
		key     string
		lookups int
		hint    string
	}{
		{"left", 0, "/model"},
		{"backspace", 1, ""},
		{"m", 1, "/model"},
		{"end", 0, "/model"},
		{"alt+left", 0, "/model"},
		{"ctrl+home", 0, "/model"},
		{"backspace", 0, "/model"}, // at the start: nothing to erase
		{"delete", 1, ""},
	} {
		n := lookups
		e.key(edKey(t, c.key))
		if lookups-n != c.lookups || e.hint != c.hint {
			t.Fatalf("%s: %d lookups, hint %q; want %d, %q", c.key, lookups-n, e.hint, c.lookups, c.hint)
		}
	}
}
