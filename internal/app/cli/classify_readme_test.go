package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
)

// readmeClassifyExample is one `echo '<json>' | go run ./cmd/rally classify`
// block of the README with the output lines it shows.
type readmeClassifyExample struct {
	input string
	// args are the command's words from "classify" on ("classify",
	// "--explain").
	args []string
	want []string
}

// readmeClassifyExamples reads the README's "Classifying provider errors"
// section and returns every sh block that pipes an echo into rally classify.
func readmeClassifyExamples(t *testing.T) []readmeClassifyExample {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Classifying provider errors")
	if start < 0 {
		t.Fatal("README has no section \"Classifying provider errors\"")
	}
	section := doc[start:]
	if end := strings.Index(section[2:], "\n## "); end >= 0 {
		section = section[:end+2]
	}
	var out []readmeClassifyExample
	for _, block := range mdfence.Texts(section, "sh") {
		if !strings.Contains(block, "rally classify") || strings.Contains(block, "--unclassified") {
			continue // --unclassified reads no input: TestReadmeUnclassified
		}
		var ex readmeClassifyExample
		for _, line := range strings.Split(block, "\n") {
			if _, after, ok := strings.Cut(line, "rally classify"); ok {
				ex.args = append([]string{"classify"}, strings.Fields(after)...)
			}
			switch {
			case strings.HasPrefix(line, "echo '"):
				// A single-quoted shell word: its text is literal.
				i, j := strings.Index(line, "'"), strings.LastIndex(line, "'")
				if j <= i {
					t.Fatalf("README: cannot read the echo line %q", line)
				}
				ex.input += line[i+1:j] + "\n"
			case strings.HasPrefix(line, "# "):
				ex.want = append(ex.want, strings.TrimPrefix(line, "# "))
			}
		}
		if ex.input == "" || len(ex.want) == 0 {
			t.Fatalf("README: a classify example without input or shown output:\n%s", block)
		}
		out = append(out, ex)
	}
	return out
}

// TestReadmeClassifyExamples runs every `rally classify` example of the
// README with its exact input and compares the output with what the README
// shows.
func TestReadmeClassifyExamples(t *testing.T) {
	examples := readmeClassifyExamples(t)
	if len(examples) < 5 {
		t.Fatalf("found %d classify examples in the README, want at least 5", len(examples))
	}
	for _, ex := range examples {
		t.Run(strings.TrimSpace(ex.input)[:min(60, len(strings.TrimSpace(ex.input)))], func(t *testing.T) {
			stdout, stderr, code := run(t, ex.input, ex.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			got := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(ex.want, "\n") {
				t.Errorf("input %s\ngot:\n%s\nREADME shows:\n%s", ex.input, strings.Join(got, "\n"), strings.Join(ex.want, "\n"))
			}
		})
	}
}
