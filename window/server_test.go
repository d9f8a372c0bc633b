package window

import (
	"context"
	"os"
	"testing"
)

// Learned windows are a server's (issue 24 defect 9): every --base-url run
// is provider "custom", so server A's n_ctx must not size server B's
// model of the same name. And the file is local input (defect 8): a
// window no overflow could state is not used.
func TestWindowsKeyedByServer(t *testing.T) {
	ctx := context.Background()
	f := &File{Path: Path(t.TempDir())}
	must(t, f.Learn(ctx, "custom", "http://10.0.0.1:8080/v1", "qwen3:8b", 4096))
	for _, tc := range []struct {
		name, baseURL string
		want          int
	}{
		{"same server", "http://10.0.0.1:8080/v1", 4096},
		{"same server, trailing slash and a query", "http://10.0.0.1:8080/v1/?key=zz", 4096},
		{"other server", "http://10.0.0.2:8080/v1", 0},
		{"other port", "http://10.0.0.1:8081/v1", 0},
		{"no base URL", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := f.Window(ctx, "custom", tc.baseURL, "qwen3:8b"); n != tc.want || err != nil {
				t.Fatalf("window %d (%v), want %d", n, err, tc.want)
			}
		})
	}
	all, _ := f.All(ctx)
	if len(all) != 1 || all[0].BaseURL != "http://10.0.0.1:8080/v1" {
		t.Fatalf("stored %+v, want the server without its query", all)
	}
}

func TestWindowsFileFromBefore(t *testing.T) {
	ctx := context.Background()
	f := &File{Path: Path(t.TempDir())}
	// Written by a rally that keyed by provider and model only, with a
	// window nothing could state beside a good one.
	old := `{"version":1,"windows":[{"provider":"custom","model":"m","tokens":4096,"learnedAt":"2026-01-01T00:00:00Z"},{"provider":"local","model":"tiny","tokens":1,"learnedAt":"2026-01-01T00:00:00Z"}]}`
	if err := os.WriteFile(f.Path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		provider, baseURL, model string
		want                     int
	}{
		{"custom", "http://any.example/v1", "m", 0}, // which server said it is unknown: not applied
		{"custom", "", "m", 4096},                   // a caller without a server reads it as before
		{"local", "", "tiny", 0},                    // 1 token: a bad write, not a window
	} {
		if n, err := f.Window(ctx, tc.provider, tc.baseURL, tc.model); n != tc.want || err != nil {
			t.Errorf("%s %q %s: window %d (%v), want %d", tc.provider, tc.baseURL, tc.model, n, err, tc.want)
		}
	}
	if err := f.Learn(ctx, "local", "", "tiny", 1); err == nil {
		t.Error("learning a 1-token window was accepted")
	}
}
