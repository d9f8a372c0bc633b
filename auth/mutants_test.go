package auth

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadBlankIsEmpty: an auth.json that is empty or only whitespace
// (created by `touch`, or emptied by hand) is an empty File, as a missing
// one is. Bug caught (a surviving mutant): decoding a blank file, which
// failed with "unexpected end of JSON input".
func TestLoadBlankIsEmpty(t *testing.T) {
	for _, body := range []string{"", " \n\t\n"} {
		path := filepath.Join(t.TempDir(), "auth.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := Load(path)
		if err != nil || f.Providers == nil || len(f.Providers) != 0 {
			t.Errorf("Load(%q) = %+v, %v; want an empty file", body, f, err)
		}
	}
}
