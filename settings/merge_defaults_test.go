package settings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergeNoFilesIsTheRoundTrip: with no settings document, Merge returns
// the defaults without their JSON round trip. The two must agree: a
// default the JSON would not carry (a field without a JSON name, an empty
// slice it would turn into nil, a value normalize would change) shows
// here as a difference.
func TestMergeNoFilesIsTheRoundTrip(t *testing.T) {
	want := new(Settings)
	if err := unmarshalDoc(toDoc(Default()), want); err != nil {
		t.Fatal(err)
	}
	want.normalize()
	for _, tt := range []struct {
		name  string
		files []*File
	}{
		{"no file", nil},
		{"files without a document", []*File{{Source: Source{Name: "global"}}, {Source: Source{Name: "project"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, warns, err := Merge(tt.files...)
			if err != nil || len(warns) > 0 {
				t.Fatalf("Merge: %v %v", warns, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the defaults differ from their round trip (-round trip +fast path):\n%s", d)
			}
		})
	}
}
