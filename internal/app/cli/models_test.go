package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestModelsCommand(t *testing.T) {
	isolate(t)
	writeProjectSettings(t, `{"providers":{"vllm":{"api":"openai-completions","baseUrl":"http://127.0.0.1:1/v1",
		"models":[{"id":"llama-3.3-70b","contextWindow":131072,"maxTokens":8192,"cost":{"input":0.5,"output":1.5}}]}}}`)
	out, errOut, code := run(t, "", "models")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "PROVIDER") || !strings.HasPrefix(lines[1], "sim ") || !strings.Contains(lines[1], "sim *") {
		t.Errorf("want the header, then sim marked as the default:\n%s", out)
	}
	for _, want := range []string{
		"vllm        llama-3.3-70b                131k     8.2k     0.5     1.5      yes", // no apiKeyEnv: needs no key
		"openai      gpt-4.1                      1.05M    33k      2       8        none",
		"anthropic   claude-sonnet-4-5            200k     64k      3       15       none",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}

	// With a key, its provider becomes the default, marked in --json.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000001234")
	out, errOut, code = run(t, "", "models", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var models []listedModel
	if err := json.Unmarshal([]byte(out), &models); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	var defaults []string
	usable := map[string]bool{}
	for _, m := range models {
		if m.Default {
			defaults = append(defaults, m.Provider+"/"+m.ID)
		}
		usable[m.Provider+"/"+m.ID] = m.Usable
	}
	if strings.Join(defaults, ",") != "anthropic/claude-sonnet-4-5" {
		t.Errorf("defaults %v, want the key's provider's first model", defaults)
	}
	if !usable["anthropic/claude-haiku-4-5"] || usable["openai/gpt-4.1"] || !usable["sim/sim"] {
		t.Errorf("usable %v", usable)
	}
	if strings.Contains(out, "000000001234") {
		t.Error("the key reached the output")
	}
}

func TestShortCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1k", 1500: "1.5k", 8192: "8.2k", 32768: "33k", 128000: "128k", 1_000_000: "1M", 1_047_576: "1.05M"} {
		if got := shortCount(n); got != want {
			t.Errorf("shortCount(%d) = %q, want %q", n, got, want)
		}
	}
}
