package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzUnquote holds Scanner's string decoding to encoding/json's.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\"", `"\u00e9\n\t\/"`, `"\ud83d\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(data)
		var got string
		if !s.Text(&got) || !s.End() || len(data) == 0 || data[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("scan accepted %q, encoding/json: %v", data, err)
		}
		if got != want {
			t.Fatalf("%q: scan %q, encoding/json %q", data, got, want)
		}
	})
}
