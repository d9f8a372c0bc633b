package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/llmtest"
)

// TestClassifyUnclassified: an error no rule recognises, met by a real run
// against the fake LLM, is kept in $RALLY_HOME/unclassified.jsonl once
// however often it comes, redacted of every key the run knows (here a
// proxy's upstream key, which the client itself does not know to hide),
// and `rally classify --unclassified` prints it as a corpus line; a
// recognised error is not kept.
func TestClassifyUnclassified(t *testing.T) {
	home := isolate(t)
	const key = "zz-live-4f9c2b7e1d8a6f30"
	t.Setenv("RALLY_API_KEY", "zz-mine-91b0c3d2e5f6a708")
	t.Setenv("UPSTREAM_API_KEY", key)
	odd := `{"error":{"message":"the frobnicator jammed while serving key ` + key + ` (ticket 77)"}}`
	other := `{"error":{"message":"flux capacitor misaligned"}}`
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.ErrorEvent, Body: odd},
		llmtest.Step{Fault: llmtest.ErrorEvent, Body: odd},
		llmtest.Step{Fault: llmtest.ErrorEvent, Body: other},
		llmtest.Step{Error: llmtest.Auth}, // 401: the status decides, nothing to report
	)
	os.MkdirAll(".rally", 0o755)
	cfg := `{"retry":{"baseDelayMs":1},"providers":{"lab":{"api":"openai-completions","baseUrl":"` + srv.URL + `/v1"}}}`
	os.WriteFile(".rally/settings.json", []byte(cfg), 0o644)
	for i := range 4 {
		if _, errOut, code := run(t, "", "--provider", "lab", "--model", "m", "-p", "hi"); code != 1 {
			t.Fatalf("run %d: exit %d, want 1 (a fatal error); stderr %q", i, code, errOut)
		}
	}
	raw, err := os.ReadFile(filepath.Join(home, "unclassified.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), key) || strings.Contains(string(raw), key[8:20]) {
		t.Errorf("the key reached the file:\n%s", raw)
	}
	out, errOut, code := run(t, "", "classify", "--unclassified")
	if code != 0 {
		t.Fatalf("classify --unclassified: exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, key[8:20]) {
		t.Errorf("the key reached the output:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (each distinct unrecognised error once, the 401 not at all):\n%s", len(lines), out)
	}
	for i, want := range []string{"frobnicator jammed", "flux capacitor"} {
		var e struct {
			Name, Provider, Body, Want, Source string
		}
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, lines[i])
		}
		if !strings.Contains(e.Body, want) || e.Provider != "lab" || e.Want != "fatal" || e.Name == "" || e.Source == "" {
			t.Errorf("line %d = %+v, want a corpus entry of provider lab whose body says %q", i, e, want)
		}
	}
	if !strings.Contains(lines[0], redact.Redacted) {
		t.Errorf("the key's place is not marked redacted: %s", lines[0])
	}
}
