package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestReadmeUnclassified runs the README's --unclassified example after the
// run it describes (provider lab answering an error no rule knows, inside
// its stream) and compares the output with what the README shows, "…"
// standing for the time it was first seen.
func TestReadmeUnclassified(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```sh\ngo run ./cmd/rally classify --unclassified\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.HasPrefix(block, "# ") {
		t.Fatal("README has no `rally classify --unclassified` example with its output")
	}
	want := strings.TrimPrefix(strings.TrimSpace(block), "# ")

	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.ErrorEvent, Body: `{"error":{"message":"the frobnicator jammed"}}`})
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"providers":{"lab":{"api":"openai-completions","baseUrl":"`+srv.URL+`/v1"}}}`), 0o644)
	if _, errOut, code := run(t, "", "--provider", "lab", "--model", "m", "-p", "hi"); code != 1 {
		t.Fatalf("the run: exit %d, want 1; stderr %q", code, errOut)
	}
	out, errOut, code := run(t, "", "classify", "--unclassified")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got := strings.TrimSpace(out)
	before, after, _ := strings.Cut(want, "…")
	if !strings.HasPrefix(got, before) || !strings.HasSuffix(got, after) || strings.Contains(got, "\n") {
		t.Errorf("got:\n%s\nREADME shows:\n%s", got, want)
	}
}
