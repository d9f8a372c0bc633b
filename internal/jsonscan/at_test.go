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

// TestIntAt: IntAt reads an integer or null after white space, as
// Scanner.Int does, and refuses what it leaves to encoding/json.
func TestIntAt(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n, next int
	}{
		{"0", 0, 1},
		{"42,", 42, 2},
		{" \t\r\n-7}", -7, 6},
		{"null", 0, 4},
		{" null]", 0, 5},
		{"\nnull", 0, 5},
		{"123456789012345", 123456789012345, 15},
		{"1234567890123456", 0, -1}, // 16 digits
		{"01", 0, -1},
		{"-", 0, -1},
		{"1.5", 0, -1},
		{"1e3", 0, -1},
		{"nul", 0, -1},
		{" ", 0, -1},
		{`"1"`, 0, -1},
	} {
		t.Run(tc.in, func(t *testing.T) {
			n, next := IntAt([]byte(tc.in), 0)
			if n != tc.n || next != tc.next {
				t.Errorf("IntAt(%q) = %d, %d; want %d, %d", tc.in, n, next, tc.n, tc.next)
			}
		})
	}
}
