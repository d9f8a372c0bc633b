package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// depth is how deeply b's arrays and objects nest, strings aside.
func depth(b []byte) int {
	d, deepest, in, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// FuzzSkipAt holds SkipAt's validation to encoding/json's: a value it
// reads whole is valid JSON, and valid JSON within its depth it reads
// whole.
func FuzzSkipAt(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-0.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, `[]`, `[1,]`, `{"a":1,}`, `{"a" 1}`,
		`01`, `-`, `1.`, `1e`, `"\x"`, "\"\x01\"", `nul`, ` [ 1 , { "k" : [ ] } ] `, "\"\xff\"",
		strings.Repeat("[", 64) + strings.Repeat("]", 64),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end := SkipAt(b, 0)
		whole := end >= 0 && WS(b, end) == len(b)
		valid := json.Valid(b)
		if whole && !valid {
			t.Fatalf("SkipAt read %q whole, encoding/json refuses it", b)
		}
		if valid && !whole && depth(b) <= maxDepth {
			t.Fatalf("SkipAt refused %q (end %d), valid JSON", b, end)
		}
	})
}
