package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llmtest"
)

// Test keys: long enough for llmtest to record them as "sk-…1111", and
// with a middle part that a leak check can grep for.
const (
	testKeyA = "sk-test-AAAAAAAAAAAAAAAA1111"
	testKeyB = "sk-test-BBBBBBBBBBBBBBBB2222"
	testKeyC = "sk-test-CCCCCCCCCCCCCCCC3333"
)

var testKeyMiddles = []string{"AAAAAAAAAAAA", "BBBBBBBBBBBB", "CCCCCCCCCCCC"}

func TestAuthCommands(t *testing.T) {
	home := isolate(t)
	t.Setenv("MY_KEY", testKeyB)
	t.Setenv("OPENAI_API_KEY", testKeyC)
	steps := []struct {
		name, stdin string
		args        []string
		code        int
		out, errOut string
	}{
		{"add from stdin", testKeyA + "\n", []string{"auth", "add", "openai", "--id", "work", "--key", "-", "--label", "team plan"}, 0, "added openai work (auth.json)", ""},
		{"add from env", "", []string{"auth", "add", "openai", "--id", "own", "--key-env", "MY_KEY"}, 0, "added openai own (auth.json ($MY_KEY))", ""},
		{"add unset env", "", []string{"auth", "add", "openai", "--id", "later", "--key-env", "NOT_SET_YET"}, 0, "added", ""},
		{"add one-run provider", testKeyA, []string{"auth", "add", "acme", "--id", "a", "--key", "-"}, 0, "added acme a", "acme is not a provider in settings; use it with --provider acme"},
		{"duplicate id", testKeyA, []string{"auth", "add", "openai", "--id", "work", "--key", "-"}, 2, "", "already exists"},
		{"both key flags", "", []string{"auth", "add", "openai", "--id", "x", "--key", "k", "--key-env", "K"}, 2, "", "exactly one of --key and --key-env"},
		{"no key flag", "", []string{"auth", "add", "openai", "--id", "x"}, 2, "", "exactly one of --key and --key-env"},
		{"no id", testKeyA, []string{"auth", "add", "openai", "--key", "-"}, 1, "", `"id" not set`},
		{"empty stdin", "", []string{"auth", "add", "openai", "--id", "x", "--key", "-"}, 2, "", "stdin is empty"},
		{"reserved id", testKeyA, []string{"auth", "add", "openai", "--id", "env:X", "--key", "-"}, 2, "", "reserved"},
		{"list", "", []string{"auth", "list"}, 0, "", ""},
		{"remove", "", []string{"auth", "remove", "openai", "own"}, 0, "removed openai own", ""},
		{"remove unknown", "", []string{"auth", "remove", "openai", "own"}, 2, "", "no such credential"},
		{"remove env", "", []string{"auth", "remove", "openai", "env:OPENAI_API_KEY"}, 2, "", "unset $OPENAI_API_KEY"},
	}
	var listOut string
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			out, errOut, code := run(t, st.stdin, st.args...)
			if code != st.code || !strings.Contains(out, st.out) || !strings.Contains(errOut, st.errOut) {
				t.Errorf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, st.code, out, st.out, errOut, st.errOut)
			}
			if st.name == "list" {
				listOut = out
			}
			for _, m := range testKeyMiddles {
				if strings.Contains(out+errOut, m) {
					t.Errorf("a key leaked: %s%s", out, errOut)
				}
			}
		})
	}
	// list: environment first, then the file in order; last four only.
	want := [][]string{
		{"PROVIDER", "ID", "LABEL", "SOURCE", "KEY", "STATUS", "RESETS"},
		{"acme", "a", "-", "auth.json", "…1111", "ok", "-"},
		{"openai", "env:OPENAI_API_KEY", "-", "$OPENAI_API_KEY", "…3333", "ok", "-"},
		{"openai", "work", "team plan", "auth.json", "…1111", "ok", "-"},
		{"openai", "own", "-", "auth.json ($MY_KEY)", "…2222", "ok", "-"},
		{"openai", "later", "-", "auth.json ($NOT_SET_YET)", "-", "$NOT_SET_YET is not set", "-"},
	}
	lines := strings.Split(strings.TrimSpace(listOut), "\n")
	if len(lines) != len(want) {
		t.Fatalf("list:\n%s", listOut)
	}
	for i, w := range want {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != strings.Join(w, " ") {
			t.Errorf("list line %d: %q, want %q", i, got, strings.Join(w, " "))
		}
	}
	fi, err := os.Stat(filepath.Join(home, "auth.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json: %v, %v", fi.Mode(), err)
	}

	// A file others can read is refused, with the fix.
	os.Chmod(filepath.Join(home, "auth.json"), 0o644)
	for _, args := range [][]string{{"auth", "list"}, {"-p", "hi", "--provider", "openai", "--model", "m"}} {
		_, errOut, code := run(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "chmod 600 "+filepath.Join(home, "auth.json")) {
			t.Errorf("%v with a 0644 auth.json: exit %d, %q", args, code, errOut)
		}
	}
}

func TestAuthHelp(t *testing.T) {
	for _, cmd := range [][]string{{"auth"}, {"auth", "add"}, {"auth", "list"}, {"auth", "remove"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			out, _, code := run(t, "", append(cmd, "--help")...)
			if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "rally auth") {
				t.Errorf("exit %d:\n%s", code, out)
			}
		})
	}
}

func TestAuthListEmpty(t *testing.T) {
	isolate(t)
	out, _, code := run(t, "", "auth", "list")
	if code != 0 || !strings.Contains(out, "no credentials; add one with") {
		t.Errorf("exit %d: %q", code, out)
	}
}

// events parses json-mode output into its events.
func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var es []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		es = append(es, e)
	}
	return es
}

func ofType(es []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range es {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

// runMain runs rally as a separate process (the test binary acting as
// rally, see TestMain), sharing this test's RALLY_HOME and directory.
func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// marksOf reads the marks file.
func marksOf(t *testing.T, home string) []auth.Mark {
	t.Helper()
	ms, err := (&auth.FileMarks{Path: auth.MarksPath(home)}).Blocked(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestStoredKeyPicksProvider: a key added with `rally auth add` makes its
// provider the default, as a key in the environment would.
func TestStoredKeyPicksProvider(t *testing.T) {
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "from my provider"})
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"providers":{"mine":{"api":"openai-completions","baseUrl":"`+srv.URL+`/v1","models":[{"id":"m"}]}}}`), 0o644)
	if _, errOut, code := run(t, "", "auth", "add", "mine", "--id", "k1", "--key", "sk-stored-key-00001234"); code != 0 {
		t.Fatalf("auth add: exit %d: %s", code, errOut)
	}
	out, errOut, code := run(t, "", "--no-session", "-p", "hi")
	if code != 0 || !strings.Contains(out, "from my provider") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0].Credential, "1234") {
		t.Errorf("requests %+v, want one with the stored key", reqs)
	}
}
