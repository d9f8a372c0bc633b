package tool

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// TestReadImageOfExactlyTheLimit (mutants that lived, issue 30 third
// round: read.go image, `n > r.maxImage()`, `r.maxImage()+1`,
// `len(data) > r.maxImage()`): an image of exactly MaxImage bytes is
// returned, whole.
func TestReadImageOfExactlyTheLimit(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "pic.png", buf.String())
	res, err := call(t, Read{Dir: dir, MaxImage: int64(buf.Len())}, map[string]any{"path": "pic.png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || res.Content[1].Type != llm.ImageType || res.Content[1].Data != base64.StdEncoding.EncodeToString(buf.Bytes()) {
		t.Errorf("content %.200v, want the whole %d-byte image", res.Content, buf.Len())
	}
}

// TestPathsAreAbsolute (a mutant that lived: tool.go resolve,
// `err == nil` after filepath.Abs): with no Dir a tool works in the
// current directory and names files by their absolute path.
func TestPathsAreAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, Read{}, map[string]any{"path": "no-such-file-mutants30"})
	if want := "read: " + filepath.Join(wd, "no-such-file-mutants30") + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
}

// TestSizeInMiB (a mutant that lived: tool.go size, `float64(n)/(1<<20)`):
// sizes of a MiB and more are shown in MiB, as an edit refused for its
// size says.
func TestSizeInMiB(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "big", strings.Repeat("x", 3<<20))
	_, err := call(t, Edit{Dir: dir, MaxBytes: 2 << 20}, map[string]any{"path": "big", "oldText": "x", "newText": "y"})
	if err == nil || !strings.Contains(err.Error(), "is 3.0 MiB, more than the 2.0 MiB edit limit") {
		t.Errorf("err %v, want the sizes in MiB", err)
	}
}
