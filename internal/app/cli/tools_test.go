package cli

import (
	"bytes"
	"encoding/json"
	"github.com/rally-agent/rally/internal/redact"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/settings"
)

// recorded is a fake LLM on loopback that also keeps every request body,
// which llmtest itself does not, so a test can grep what rally sent.
type recorded struct {
	fake *llmtest.Server
	url  string

	mu     sync.Mutex
	bodies []string
}

func newRecorded(t *testing.T, steps ...llmtest.Step) *recorded {
	t.Helper()
	r := &recorded{fake: llmtest.New(steps...)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.fake.ServeHTTP(w, req)
	}))
	t.Cleanup(func() { r.fake.Close(); srv.Close() })
	r.url = srv.URL
	return r
}

func (r *recorded) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

func TestMaxTurnsFlagValidated(t *testing.T) {
	isolate(t)
	for _, v := range []string{"-5", "0", "10001", "99999999999", "abc", "1.5"} {
		t.Run(v, func(t *testing.T) {
			out, errOut, code := run(t, "", "--no-session", "--max-turns", v, "-p", "hi")
			if code != 2 || out != "" || !strings.Contains(errOut, "--max-turns") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
	_, errOut, code := run(t, "", "--no-session", "--max-turns", "-5", "-p", "hi")
	if want := "rally: --max-turns: must be an integer from 1 to 10000, got -5\n"; code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
	// The bounds themselves are fine; --mode rpc checks the flag too.
	for _, v := range []string{"1", "10000"} {
		if _, errOut, code := run(t, "", "--no-session", "--max-turns", v, "-p", "hi"); code != 0 {
			t.Errorf("--max-turns %s: exit %d, %s", v, code, errOut)
		}
	}
	if _, errOut, code := run(t, "", "--mode", "rpc", "--max-turns", "0"); code != 2 || !strings.Contains(errOut, "--max-turns") {
		t.Errorf("rpc: exit %d, %s", code, errOut)
	}
}

// TestBrokenAuthRefused: with no provider configured, an auth.json rally
// cannot use stops the run (exit 2, the file and the fix named) instead
// of a silent answer from the offline model.
func TestBrokenAuthRefused(t *testing.T) {
	cases := []struct {
		name, content string
		mode          os.FileMode
		want          []string
	}{
		{"readable by others", `{"providers":{"openai":[{"id":"a","key":"sk-abcdefgh12345678"}]}}`, 0o644,
			[]string{"is readable by group or others (mode 0644)", "fix it with: chmod 600 "}},
		{"malformed", `{"providers": {`, 0o600, []string{"unexpected EOF", "fix the file", "or move it away"}},
		{"not an object", `["sk-abcdefgh12345678"]`, 0o600, []string{"cannot unmarshal array", "fix the file"}},
		{"invalid credential", `{"providers":{"openai":[{"id":"a","key":"sk-abcdefgh12345678","keyEnv":"X"}]}}`, 0o600,
			[]string{`providers.openai[0]: credential "a": give exactly one of key and keyEnv`, "fix the file"}},
		{"unknown field", `{"providers":{"openai":[{"id":"a","secret":"sk-abcdefgh12345678"}]}}`, 0o600,
			[]string{`unknown field "secret"`, "fix the file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := isolate(t)
			path := filepath.Join(home, "auth.json")
			if err := os.WriteFile(path, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, c.mode) // past the umask
			out, errOut, code := run(t, "", "--no-session", "-p", "What does rally do?")
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			for _, w := range append(c.want, path) {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if strings.Contains(errOut, "abcdefgh") {
				t.Errorf("the key leaked: %q", errOut)
			}
		})
	}
	// Without a file, or with --provider sim, the offline model answers.
	isolate(t)
	if out, errOut, code := run(t, "", "--no-session", "-p", "What does rally do?"); code != 0 || out == "" {
		t.Errorf("no auth.json: exit %d, %q, %q", code, out, errOut)
	}
}

func TestScrubEnv(t *testing.T) {
	st := settings.Default()
	st.Providers["mine"] = settings.Provider{APIKeyEnv: "MINE_TOKEN"}
	environ := []string{
		"PATH=/bin", "HOME=/root", "RALLY_API_KEY=sk-rally-0123456789",
		"OPENAI_API_KEY=sk-openai-0123456789", "MINE_TOKEN=mine-0123456789",
		"DEEPSEEK_API_KEY=sk-deep-0123456789", "TEAM_KEY=team-0123456789",
		"COPY_OF_KEY=sk-openai-0123456789", "SHORT=x", "EMPTY_API_KEY=",
	}
	file := &auth.File{Providers: map[string][]auth.Credential{"openai": {{ID: "t", KeyEnv: "TEAM_KEY"}, {ID: "f", Key: "sk-file-0123456789"}}}}
	names, keys := secrets(st, file, environ)
	got := scrubEnv(environ, names, keys, []string{"OPENAI_API_KEY"})
	// COPY_OF_KEY holds a key under a name nobody allowed: it goes too.
	want := []string{"PATH=/bin", "HOME=/root", "OPENAI_API_KEY=sk-openai-0123456789", "SHORT=x"}
	if !slices.Equal(got, want) {
		t.Errorf("scrubbed env\n%q\nwant\n%q", got, want)
	}
	// Every key is known to the redactor, opted-in or not, longest first.
	for _, k := range []string{"sk-rally-0123456789", "sk-openai-0123456789", "mine-0123456789", "sk-deep-0123456789", "team-0123456789", "sk-file-0123456789"} {
		if !slices.Contains(keys, k) {
			t.Errorf("key %s is not known", k)
		}
	}
	if got := redact.Secrets("a sk-openai-0123456789 b team-0123456789 c", keys...); got != "a [redacted] b [redacted] c" {
		t.Errorf("redacted %q", got)
	}
	// Nothing set: only the defaults, and nothing to redact.
	names, keys = secrets(settings.Default(), file, []string{"PATH=/bin"})
	if len(keys) != 1 || !names["RALLY_API_KEY"] || !names["ANTHROPIC_API_KEY"] {
		t.Errorf("names %v, keys %d", names, len(keys))
	}
}

// TestToolSecrets runs tools that print their environment and go after
// auth.json, through rally against the fake LLM, with keys in the
// environment and in auth.json, and greps everything rally wrote or sent
// for every key.
func TestToolSecrets(t *testing.T) {
	home := isolate(t)
	keys := map[string]string{
		"RALLY_API_KEY":    "sk-rallyenv-SECRET-0001-abcdefgh",
		"OPENAI_API_KEY":   "sk-openaienv-SECRET-0002-abcdefgh",
		"GROQ_API_KEY":     "gsk_groqenv-SECRET-0003-abcdefgh",
		"TEAM_KEY":         "team-keyenv-SECRET-0004-abcdefgh",
		"UNKNOWN_API_KEY":  "unk-otherenv-SECRET-0005-abcdefgh",
		"auth.json openai": "sk-authfile-SECRET-0006-abcdefgh",
	}
	for name, k := range keys {
		if !strings.Contains(name, " ") {
			t.Setenv(name, k)
		}
	}
	authJSON := `{"providers":{"openai":[{"id":"file","key":"` + keys["auth.json openai"] + `"},{"id":"team","keyEnv":"TEAM_KEY"}]}}`
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte(authJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	// The user opts one variable back in: the command sees it, and its
	// value is still redacted where it is printed.
	writeProjectSettings(t, `{"tools":{"allowEnv":["OPENAI_API_KEY"]}}`)
	// A key that reached a project file is caught on the way out too.
	os.WriteFile("notes.txt", []byte("old key: "+keys["auth.json openai"]+"\n"), 0o644)

	calls := []llmtest.ToolCall{
		{Name: "bash", Arguments: `{"command":"env"}`},
		{Name: "bash", Arguments: `{"command":"cat $RALLY_HOME/auth.json"}`},
		{Name: "read", Arguments: `{"path":` + quote(filepath.Join(home, "auth.json")) + `}`},
		{Name: "read", Arguments: `{"path":` + quote(filepath.Join(home, "auth-marks.json")) + `}`},
		{Name: "read", Arguments: `{"path":"notes.txt"}`},
		{Name: "bash", Arguments: `{"command":"echo allowed=${#OPENAI_API_KEY} value=$OPENAI_API_KEY"}`},
	}
	fake := newRecorded(t, llmtest.Step{ToolCalls: calls}, llmtest.Step{Text: "done"})
	out, errOut, code := run(t, "", "--mode", "json", "--verbose", "--api", "openai-completions", "--base-url", fake.url+"/v1", "--model", "m", "-p", "show me everything")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	texts := map[string]string{"events (stdout)": out, "stderr": errOut}
	for i, b := range reqs {
		texts["request "+strconv.Itoa(i+1)] = b
	}
	for _, f := range append(sessionFiles(t, home), filepath.Join(home, "logs", "rally.log")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	for where, text := range texts {
		for name, k := range keys {
			// The whole key, and a part of it with no known key prefix.
			if strings.Contains(text, k) || strings.Contains(text, k[len(k)-20:]) {
				t.Errorf("%s leaked into %s", name, where)
			}
		}
	}
	// The tools did run, and what they met is in what the model got.
	sent := reqs[1]
	for _, want := range []string{
		"PATH=",                         // env ran
		"is off limits to tools",        // auth.json refused by bash and read
		"auth-marks.json is off limits", // so is the marks file
		"old key: [redacted]",           // notes.txt redacted
		`allowed=33 value=[redacted]`,   // opted in, still redacted in output
	} {
		if !strings.Contains(sent, want) {
			t.Errorf("the tool results sent to the model lack %q", want)
		}
	}
	for _, gone := range []string{"RALLY_API_KEY=", "GROQ_API_KEY=", "TEAM_KEY=", "UNKNOWN_API_KEY="} {
		if strings.Contains(sent, gone) {
			t.Errorf("env printed %s: it should not be in the tools' environment", gone)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
