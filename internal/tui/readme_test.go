package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECaptures checks that the screens shown in the README are the
// ones the tmux test captured (testdata/readme-*.golden), so they cannot
// drift from the real output.
func TestREADMECaptures(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"readme-loader", "readme-session"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			marker := "<!-- tui-capture: " + name + " -->\n```text\n"
			_, rest, ok := strings.Cut(string(readme), marker)
			if !ok {
				t.Fatalf("README has no %q block", marker)
			}
			block, _, ok := strings.Cut(rest, "```\n")
			if !ok {
				t.Fatal("the block is not closed")
			}
			if block != string(want) {
				t.Errorf("README block %s differs from the capture:\n--- README\n%s--- capture\n%s", name, block, want)
			}
		})
	}
}
