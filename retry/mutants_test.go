package retry

import "testing"

// TestClassOutOfRange: a class just outside the named ones prints its
// number and does not marshal; the first and last named ones do.
// Bugs caught (surviving mutants): the range checks moved by one, which
// turned Fatal into "Class(0)" or indexed past the names (a panic).
func TestClassOutOfRange(t *testing.T) {
	for _, tt := range []struct {
		c    Class
		name string
		ok   bool
	}{
		{Fatal - 1, "Class(-1)", false},
		{Fatal, "fatal", true},
		{ContextOverflow, "context_overflow", true},
		{ContextOverflow + 1, "Class(4)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.String(); got != tt.name {
				t.Errorf("String = %q, want %q", got, tt.name)
			}
			b, err := tt.c.MarshalText()
			if (err == nil) != tt.ok || tt.ok && string(b) != tt.name {
				t.Errorf("MarshalText = %q, %v; want ok %v", b, err, tt.ok)
			}
		})
	}
}
