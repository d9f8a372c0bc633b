package retry

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// agreesWithEncodingJSON checks jsonValue against json.Valid, and the
// decoded strings against json.Unmarshal, for one input.
func agreesWithEncodingJSON(t *testing.T, s string) {
	t.Helper()
	n, ok := jsonValue(s)
	whole := ok && strings.TrimLeft(s[n:], " \t\r\n") == ""
	if valid := json.Valid([]byte(s)); whole != valid {
		t.Fatalf("jsonValue(%q) whole=%v (n=%d ok=%v), json.Valid=%v", s, whole, n, ok, valid)
	}
	if !whole || !utf8.ValidString(s) {
		return
	}
	var want string
	if json.Unmarshal([]byte(s), &want) == nil {
		w := newWalker(s, &facts{}, nil)
		if got, _ := w.str(true); got != want {
			t.Fatalf("string %q decodes to %q, encoding/json says %q", s, got, want)
		}
	}
}

func TestJSONWalkAgrees(t *testing.T) {
	inputs := []string{
		`{}`, `[]`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
		`0`, `-0.5e+3`, `01`, `1.`, `-`, `1e`, `{"a":}`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `[1 2]`,
		`true`, `nul`, "\"raw\nnewline\"", `"bad \' escape"`, `"\x"`, `{"a":[{"b":"c"}]} `, `  {"a":1}`,
		strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2),
	}
	for _, e := range loadCorpus(t) {
		if i := strings.IndexAny(e.Body, "{["); i >= 0 {
			inputs = append(inputs, e.Body[i:])
		}
	}
	for _, s := range inputs {
		agreesWithEncodingJSON(t, s)
	}
}

func FuzzJSONWalk(f *testing.F) {
	f.Add(`{"error":{"code":429,"message":"slow down","details":[{"retryDelay":"3s"}]}}`)
	f.Add(`"\u00e9\ud83d\ude00 \"x\""`)
	f.Add(`[1, -2.5e3, true, null, {"a": "b"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		agreesWithEncodingJSON(t, s)
	})
}
