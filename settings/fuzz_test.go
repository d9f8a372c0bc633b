package settings

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseFile checks that any input either parses or fails with an
// *Error, never panics, and that what parses survives a save unchanged in
// meaning: same values, and Check gives the same answer.
func FuzzParseFile(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `[]`, `{"retry": {"maxRetries": 3}}`, `{"a": 1, "a": 2}`,
		"{\n\t\"x\": [1, 2.50, -0, 1e3, \"\\u00e9<>\"],\n\t\"y\": {\"z\": null}\n}",
		`{"providers": {"p": {"api": "sim", "models": [{"id": "m", "cost": {"input": 1.5}}]}}}`,
		`{"retry": {`, `{"a" 1}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	src := Source{Path: "settings.json", Name: "settings.json"}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseFile(src, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseFile error %v is not ErrInvalid", err)
			}
			return
		}
		_, checkErr := file.Check()
		out := file.Bytes()
		again, err := ParseFile(src, out)
		if err != nil {
			t.Fatalf("saved bytes do not parse: %v\n%s", err, out)
		}
		if diff := cmp.Diff(plain(file.doc), plain(again.doc)); diff != "" {
			t.Fatalf("round trip changed the document (-before +after):\n%s", diff)
		}
		if _, err := again.Check(); (err == nil) != (checkErr == nil) {
			t.Fatalf("Check before save: %v, after: %v", checkErr, err)
		}
		// The document holds exactly what encoding/json reads.
		var want, got any
		if json.Unmarshal(data, &want) == nil && len(file.dups) == 0 {
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("saved file reads differently (-input +saved):\n%s", diff)
			}
		}
	})
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"retry.maxRetries", "hooks[0].on[1]", "a..b", "x[", "x[1]]", "[0]", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		path, err := ParsePath(key)
		if err != nil {
			return
		}
		// Whatever parses can be looked up and formatted without a panic.
		_ = schemaAt(path)
		_ = formatPath(path)
	})
}
