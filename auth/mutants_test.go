package auth

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// TestRotationWarnsOnlyOnTrouble: a store that is down is warned about,
// once for the mark it cannot record and once for the marks it cannot
// read; a working store and provider give no warning, only the mark's
// note. Bugs caught (surviving mutants): each of the three error tests
// negated, which warned on success and stayed silent on failure.
func TestRotationWarnsOnlyOnTrouble(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		down       bool
		want, none []string
	}{
		{"store down", true, []string{"cannot record usage-limit mark", "cannot read usage-limit marks"}, []string{"credential blocked by a usage limit", "auth: credentials"}},
		{"store up", false, []string{"credential blocked by a usage limit"}, []string{"cannot record", "cannot read", "auth: credentials"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if tt.down {
				r.cfg.Marks = failing{}
			}
			var logs strings.Builder
			r.cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
			rot := r.rotation()
			a := must2(rot.Start(ctx, "openai", "m"))
			if got := describe(rot.Switch(ctx, a, report(usageLimit("limit"), time.Hour))); got != "b openai/m 2222" {
				t.Fatalf("switch %s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, logs.String())
				}
			}
			for _, w := range tt.none {
				if strings.Contains(logs.String(), w) {
					t.Errorf("log has %q:\n%s", w, logs.String())
				}
			}
		})
	}
}
