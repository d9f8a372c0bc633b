package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// rally caps a stream at 4× the model's maxTokens of output (8192 when
// the model is unknown): the bench's own model must leave room for its
// longest stream, 50k deltas, or those rows fail with the stream cut.
func TestRallyModelFitsTheLongestStream(t *testing.T) {
	dir := t.TempDir()
	if _, err := (Agent{Argv: []string{"rally"}}).command(context.Background(), dir, "http://127.0.0.1:1", tuning{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "home", ".rally", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Providers map[string]struct {
			Models []struct {
				ID        string `json:"id"`
				MaxTokens int    `json:"maxTokens"`
			} `json:"models"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Providers["fake"].Models {
		if m.ID == fakeModel {
			if 4*m.MaxTokens < 50000 {
				t.Fatalf("maxTokens %d: a 50k-delta stream is cut at %d", m.MaxTokens, 4*m.MaxTokens)
			}
			return
		}
	}
	t.Fatalf("no model %q for provider fake in %s", fakeModel, b)
}
