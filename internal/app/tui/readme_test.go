package tui

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
)

// TestREADMECaptures checks that the screens shown in the README are the
// ones the tmux test captured (testdata/readme-*.golden), so they cannot
// drift from the real output.
func TestREADMECaptures(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"readme-loader", "readme-session"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			marker := "<!-- tui-capture: " + name + " -->"
			blocks := mdfence.Blocks(string(readme))
			i := slices.IndexFunc(blocks, func(b mdfence.Block) bool { return b.Before == marker && b.Lang == "text" })
			if i < 0 {
				t.Fatalf("README has no text block after %q", marker)
			}
			if block := blocks[i].Text(); block != string(want) {
				t.Errorf("README block %s differs from the capture:\n--- README\n%s--- capture\n%s", name, block, want)
			}
		})
	}
}
