package auth

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// TestFallbackSkipsTheFailedModel: a fallback list naming the model that
// just failed moves past it to the next one. Bug caught (surviving
// mutants): either half of "same provider and same model" negated, which
// "fell back" to the failing model itself on a transient failure (on a
// usage limit its blocked key hid the bug).
func TestFallbackSkipsTheFailedModel(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, "openai/m", "backup/m2")
	rot := r.rotation()
	start := must2(rot.Start(ctx, "openai", "m"))
	if got := describe(rot.Switch(ctx, start, report(overloaded(), 5*time.Hour))); got != "backup/m2 backup/m2 3333" {
		t.Errorf("switch %s, want backup/m2", got)
	}
}
