package settings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// throughDoc is how overDefaults laid files over the defaults before: the
// defaults as a document too, every file merged over it, the result
// decoded into a zero Settings. overDefaults must give the same.
func throughDoc(files []*File) (*Settings, error) {
	doc := toDoc(Default())
	for _, f := range files {
		if f.doc != nil {
			doc = merge(doc, f.doc)
		}
	}
	s := new(Settings)
	if err := unmarshalDoc(doc, s); err != nil {
		return nil, err
	}
	return s, nil
}

// checked parses and checks each document, or reports false when one is
// not valid settings (Merge would refuse those before overDefaults).
func checked(t testing.TB, docs ...[]byte) ([]*File, bool) {
	t.Helper()
	var files []*File
	for i, d := range docs {
		f, err := ParseFile(Source{Path: "settings.json", Name: []string{"global", "project"}[i%2]}, d)
		if err != nil {
			return nil, false
		}
		if _, err := f.Check(); err != nil {
			return nil, false
		}
		files = append(files, f)
	}
	return files, true
}

func TestOverDefaultsAsThroughTheDocument(t *testing.T) {
	for _, tt := range []struct {
		name string
		docs []string
	}{
		{"empty document", []string{`{}`}},
		{"a retry field", []string{`{"retry": {"baseDelayMs": 100}}`}},
		{"a new provider (rally bench's)", []string{`{"retry": {"baseDelayMs": 100}, "providers": {"fake": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "fake-model", "contextWindow": 1048576, "maxTokens": 65536}]}}}`}},
		{"a built-in provider's field", []string{`{"providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}`}},
		{"a built-in provider's models", []string{`{"providers": {"sim": {"models": [{"id": "other"}]}}}`}},
		{"a built-in provider and a new one", []string{`{"providers": {"anthropic": {"timeoutMs": 5000}, "mine": {"api": "sim"}}}`}},
		{"lists replace", []string{`{"retry": {"fallbackModels": ["a/b", "c/d"]}, "tools": {"confirm": ["bash"]}}`}},
		{"fleet budgets", []string{`{"fleet": {"budgets": {"openai": {"requestsPerMinute": 10}}}}`}},
		{"two files: the later wins field by field", []string{
			`{"retry": {"maxRetries": 3, "baseDelayMs": 50}, "providers": {"openai": {"timeoutMs": 1000}}}`,
			`{"retry": {"maxRetries": 7}, "providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var docs [][]byte
			for _, d := range tt.docs {
				docs = append(docs, []byte(d))
			}
			files, ok := checked(t, docs...)
			if !ok {
				t.Fatalf("the case's settings are not valid: %s", tt.docs)
			}
			got, err := overDefaults(files)
			if err != nil {
				t.Fatal(err)
			}
			want, err := throughDoc(files)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("overDefaults differs from the document merge (-document +overDefaults):\n%s", d)
			}
		})
	}
}

// caseVariant reports a file with a key that is a default's key in other
// case ("provIders", "MaxRetries"). encoding/json and the schema accept
// those, but the old merge cannot stand for overDefaults there: its JSON
// came from a Go map, in sorted order, where the defaults' "providers"
// followed a file's "provIders" and won, so the file's key was dropped.
// overDefaults keeps the file's; the fuzzer found the difference.
func caseVariant(files []*File) bool {
	names := map[string]bool{}
	walk(toDoc(Default()), nil, func(path []string, _ any) {
		if len(path) > 0 {
			names[path[len(path)-1]] = true
		}
	})
	found := false
	for _, f := range files {
		walk(f.doc, nil, func(path []string, _ any) {
			if len(path) == 0 || names[path[len(path)-1]] {
				return
			}
			for n := range names {
				if strings.EqualFold(n, path[len(path)-1]) {
					found = true
				}
			}
		})
	}
	return found
}

// FuzzOverDefaults: for any two valid settings files, overDefaults agrees
// with the merge through the document, and leaves the files as read.
func FuzzOverDefaults(f *testing.F) {
	f.Add([]byte(`{"providers": {"openai": {"baseUrl": "https://a.example/v1"}}}`), []byte(`{"providers": {"openai": {"timeoutMs": 9}}}`))
	f.Add([]byte(`{"retry": {"maxRetries": 1}}`), []byte(`{}`))
	f.Add([]byte(`{"providers": {"sim": null}}`), []byte(`{"providers": {"groq": {"models": [{"id": "x"}]}}}`))
	f.Add([]byte(`{"compaction": {"enabled": false}, "fleet": {"budgets": {"p": {"requestsPerMinute": 1}}}}`), []byte(`{"fleet": {"budgets": {"p": {"tokensPerMinute": 2}}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		files, ok := checked(t, a, b)
		if !ok || caseVariant(files) {
			return
		}
		before := []any{plain(files[0].doc), plain(files[1].doc)}
		got, err := overDefaults(files)
		want, werr := throughDoc(files)
		if (err == nil) != (werr == nil) {
			t.Fatalf("overDefaults: %v; through the document: %v", err, werr)
		}
		if err != nil {
			return // refused both ways: Merge reports it
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("overDefaults differs from the document merge (-document +overDefaults):\n%s", d)
		}
		if d := cmp.Diff(before, []any{plain(files[0].doc), plain(files[1].doc)}); d != "" {
			t.Fatalf("overDefaults changed the files' documents:\n%s", d)
		}
	})
}

// BenchmarkMergeFile merges rally bench's own settings file (a retry field
// and one provider of its own), what every process it starts loads.
func BenchmarkMergeFile(b *testing.B) {
	doc := []byte(`{"retry": {"baseDelayMs": 100}, "providers": {"fake": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "fake-model", "contextWindow": 1048576, "maxTokens": 65536}]}}}`)
	b.ReportAllocs()
	for b.Loop() {
		f, err := ParseFile(Source{Path: "settings.json", Name: "global"}, doc)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Merge(f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDefaultMapsAreProvidersOnly: overDefaults merges a file's map entry
// over a default one only for providers, as encoding/json decodes every
// other map element afresh. A default added to another map (a built-in
// fleet budget, say) needs the same step there; this fails until it has
// one.
func TestDefaultMapsAreProvidersOnly(t *testing.T) {
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Map:
			if v.Len() > 0 && path != ".Providers" {
				t.Errorf("Default()%s has %d entries: overDefaults must merge a file's entries over them as it does providers'", path, v.Len())
			}
		}
	}
	walk("", reflect.ValueOf(Default()))
}

// TestOverDefaultsCaseVariantProviders: a file's "Providers" is providers,
// as encoding/json reads it, so its entry of a built-in's name still merges
// over the built-in instead of replacing it.
func TestOverDefaultsCaseVariantProviders(t *testing.T) {
	files, ok := checked(t, []byte(`{"Providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}`))
	if !ok {
		t.Fatal("the case's settings are not valid")
	}
	got, err := overDefaults(files)
	if err != nil {
		t.Fatal(err)
	}
	want := Builtin()["openai"]
	want.BaseURL = "https://proxy.example/v1"
	if d := cmp.Diff(want, got.Providers["openai"]); d != "" {
		t.Errorf("openai under \"Providers\" (-want +got):\n%s", d)
	}
}
