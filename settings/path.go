package settings

import (
	"fmt"
	"strconv"
	"strings"
)

// A path names a value in a settings document as segments: object keys, and
// decimal indexes for arrays. It is written with dots and brackets, as in
// providers.openai.models[0].id; hooks.0.on is accepted too. Keys that
// contain dots or brackets cannot be written this way.

// providerName is what a providers key may look like: no dots or brackets,
// so that every provider can be named in a dotted key.
const providerName = "^[A-Za-z0-9][A-Za-z0-9_-]*$"

// ParsePath splits a dotted key such as retry.maxRetries or hooks[0].on.
func ParsePath(key string) ([]string, error) {
	if key == "" {
		return nil, nil
	}
	var segs []string
	for part := range strings.SplitSeq(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" && rest == "" {
			return nil, fmt.Errorf("parse key %q: empty segment", key)
		}
		if name != "" {
			segs = append(segs, name)
		}
		if rest == "" {
			continue
		}
		// rest is "0]" or "0][1]".
		for ix := range strings.SplitSeq(strings.TrimSuffix(rest, "]"), "][") {
			if _, ok := index(ix); !ok {
				return nil, fmt.Errorf("parse key %q: %q is not an array index", key, ix)
			}
			segs = append(segs, ix)
		}
		if !strings.HasSuffix(rest, "]") {
			return nil, fmt.Errorf("parse key %q: missing ]", key)
		}
	}
	return segs, nil
}

// index parses an array index: decimal digits only, no sign.
func index(seg string) (int, bool) {
	if seg == "" || strings.TrimLeft(seg, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(seg)
	return i, err == nil
}

// formatPath writes segments back as a dotted key, using brackets where the
// document (or, failing that, the schema) has an array.
func formatPath(path []string) string {
	var b strings.Builder
	n := schemaRoot()
	for i, seg := range path {
		if n != nil && n.isArray() {
			b.WriteString("[" + seg + "]")
		} else {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
		if n != nil {
			n = n.child(seg)
		}
	}
	return b.String()
}

func joinPath(path []string, more ...string) []string {
	out := make([]string, 0, len(path)+len(more))
	return append(append(out, path...), more...)
}
