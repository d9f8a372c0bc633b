package settings

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalid matches, with errors.Is, every *Error: a settings file that
// rally refuses to use.
var ErrInvalid = errors.New("invalid settings")

// Error is one problem in a settings file. It reads
//
//	.rally/settings.json: retry.maxRetries: must be an integer from 0 to 100, got "three"
//
// or, for a file that is not JSON,
//
//	settings.json:3:14: invalid character '}' looking for beginning of object key string
type Error struct {
	File string // the file as messages name it (see Source.Name)
	// Line and Column (1-based) locate a syntax error; 0 otherwise.
	Line, Column int
	Path         string // JSON path such as retry.maxRetries; "" for the whole file
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	if e.Path != "" {
		b.WriteString(": " + e.Path)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errors returns every *Error in err's tree (Load joins one per problem
// with errors.Join), in order.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if e, ok := err.(*Error); ok {
			out = append(out, e)
			return
		}
		switch x := err.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return out
}

// Warning is a problem that does not stop rally, such as an unknown key.
type Warning struct {
	File, Path, Msg string
}

func (w Warning) String() string {
	if w.Path == "" {
		return w.File + ": " + w.Msg
	}
	return w.File + ": " + w.Path + ": " + w.Msg
}

// explain turns one schema failure into errors in the "must be ..., got
// ..." form. Unknown keys are not errors; unknownKeys reports them.
func explain(file string, doc any, f failure) []*Error {
	at := f.at
	mk := func(path []string, msg string) *Error {
		return &Error{File: file, Path: formatPath(path), Msg: msg}
	}
	got, _ := lookup(doc, at)
	n := schemaAt(at)
	switch f.kind {
	case failAdditional:
		return nil
	case failRequired:
		out := make([]*Error, len(f.keys))
		for i, m := range f.keys {
			out[i] = mk(joinPath(at, m), "is required")
		}
		return out
	case failPropertyNames:
		want := "valid"
		if n != nil && n.PropertyNames != nil {
			want = n.PropertyNames.want()
		}
		return []*Error{mk(at, fmt.Sprintf("key %q: must be %s", f.key, want))}
	case failMinItems:
		return []*Error{mk(at, fmt.Sprintf("must have at least %d %s, got %d", f.want, plural(f.want, "item"), f.got))}
	}
	// type, enum, minimum, maximum, pattern, minLength: what the value
	// must be says it better than which keyword failed.
	if n == nil {
		// Not expected: the validator only reaches values the schema
		// describes.
		return []*Error{mk(at, "is invalid")}
	}
	if len(at) > 0 && at[len(at)-1] == "apiKeyEnv" {
		// People paste the key itself here; never echo it.
		return []*Error{mk(at, "must be "+n.want()+" (the value is not shown: it may be a key)")}
	}
	return []*Error{mk(at, "must be "+n.want()+", got "+describe(got))}
}

// unknownKeys turns an additionalProperties failure into one warning per
// key, with a guess at the key that was meant.
func unknownKeys(file string, f failure) []Warning {
	if f.kind != failAdditional {
		return nil
	}
	var known []string
	if n := schemaAt(f.at); n != nil {
		known = n.order
	}
	out := make([]Warning, 0, len(f.keys))
	for _, p := range slices.Sorted(slices.Values(f.keys)) {
		msg := "unknown key, ignored"
		if s := closest(p, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		out = append(out, Warning{File: file, Path: formatPath(joinPath(f.at, p)), Msg: msg})
	}
	return out
}

// closest returns the known key nearest to k if it is a plausible typo; of
// keys equally near, the first of known (sorted: the schema's keys are).
func closest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if d := distance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
