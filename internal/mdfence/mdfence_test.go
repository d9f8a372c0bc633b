package mdfence

import (
	"reflect"
	"testing"
)

func TestBlocks(t *testing.T) {
	doc := "# Title\n<!-- marker -->\n```sh\nrally -p hi\n# exit 0\n```\ntext\n```\nplain\n```  \n```json\n{}\n"
	want := []Block{
		{Lang: "sh", Lines: []string{"rally -p hi", "# exit 0"}, Open: 2, Before: "<!-- marker -->"},
		{Lang: "", Lines: []string{"plain"}, Open: 7, Before: "text"},
		{Lang: "json", Lines: []string{"{}", ""}, Open: 10, Before: "```"},
	}
	if got := Blocks(doc); !reflect.DeepEqual(got, want) {
		t.Fatalf("blocks\n got %#v\nwant %#v", got, want)
	}
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"sh", []string{"rally -p hi\n# exit 0\n"}},
		{"", []string{"plain\n"}},
		{"go", nil},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			if got := Texts(doc, tc.lang); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Texts(%q) = %q, want %q", tc.lang, got, tc.want)
			}
		})
	}
}
