package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// TestBranch: a fork (RPC fork, clone) is a new file holding the chain up
// to the leaf, ids kept, naming its parent; the original is untouched.
func TestBranch(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, "/p")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		id, err := j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}, false)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	j.Close()
	before, _ := os.ReadFile(j.Path())

	for _, tt := range []struct {
		name, leaf string
		want       string // texts of the branch's context
	}{
		{"up to the second", ids[1], "one two"},
		{"all of it", ids[2], "one two three"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, err := Branch(j.Path(), tt.leaf, "/p")
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(path) != dir || path == j.Path() {
				t.Fatalf("branch at %s", path)
			}
			ld, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ld.Messages {
				got = append(got, m.TextOf())
			}
			if strings.Join(got, " ") != tt.want || len(ld.Warnings) > 0 {
				t.Fatalf("context %q (warnings %v), want %q", got, ld.Warnings, tt.want)
			}
			head, _ := os.ReadFile(path)
			if !strings.Contains(strings.SplitN(string(head), "\n", 2)[0], `"parentSession":"`+j.Path()+`"`) {
				t.Fatalf("header %s lacks the parent", strings.SplitN(string(head), "\n", 2)[0])
			}
			if es, _ := ReadEntries(path); tt.leaf != "" && Leaf(es) != tt.leaf {
				t.Fatalf("leaf %q, want %q (ids are kept)", Leaf(es), tt.leaf)
			}
		})
	}
	if _, err := Branch(j.Path(), "nothere", "/p"); err == nil {
		t.Fatal("a branch from an unknown entry was made")
	}
	if after, _ := os.ReadFile(j.Path()); string(after) != string(before) {
		t.Fatal("branching changed the original file")
	}
}
