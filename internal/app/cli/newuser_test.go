package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// bodies is a fake LLM on loopback that also keeps every request body, so
// a test can read what rally sent (system prompt, tools, reasoning).
type bodies struct {
	mu   sync.Mutex
	seen [][]byte
	url  string
}

func newBodies(t *testing.T, steps ...llmtest.Step) *bodies {
	t.Helper()
	b := &bodies{}
	fake := llmtest.New(steps...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.seen = append(b.seen, body)
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { fake.Close(); srv.Close() })
	b.url = srv.URL
	return b
}

func (b *bodies) all() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.seen...)
}

// chat is one OpenAI Chat Completions request body, as far as these tests read it.
type chat struct {
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ReasoningEffort string `json:"reasoning_effort"`
}

func (b *bodies) last(t *testing.T) chat {
	t.Helper()
	all := b.all()
	if len(all) == 0 {
		t.Fatal("no request reached the fake LLM")
	}
	var c chat
	if err := json.Unmarshal(all[len(all)-1], &c); err != nil {
		t.Fatalf("request body: %v: %s", err, all[len(all)-1])
	}
	return c
}

func (c chat) system() string {
	for _, m := range c.Messages {
		if m.Role == "system" || m.Role == "developer" {
			s, _ := m.Content.(string)
			return s
		}
	}
	return ""
}

func (c chat) toolNames() string {
	var names []string
	for _, tl := range c.Tools {
		names = append(names, tl.Function.Name)
	}
	return strings.Join(names, ",")
}

// Defect 1: --session FILE creates FILE, and the next run resumes it.
func TestSessionFlagCreatesTheFile(t *testing.T) {
	home := isolate(t)
	path := filepath.Join(t.TempDir(), "sub", "work.jsonl")
	for i, prompt := range []string{"first", "second"} {
		if _, errOut, code := run(t, "", "--session", path, "-p", prompt); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i+1, code, errOut)
		}
	}
	loaded, err := journal.Load(path)
	if err != nil {
		t.Fatalf("the named file: %v", err)
	}
	if len(loaded.Messages) != 4 {
		t.Errorf("%s holds %d messages after two runs, want 4 (the second run resumed it)", path, len(loaded.Messages))
	}
	others, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.jsonl"))
	if len(others) != 1 || len(sessionFiles(t, home)) != 0 {
		t.Errorf("files beside it %v, in the session dir %v; want only the named file", others, sessionFiles(t, home))
	}
}

// Defect 4: a provider without a key fails before any request, naming
// the fix; a run that a stored key moved off sim says where it went.
func TestNoKeyNamesTheFix(t *testing.T) {
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "paid answer"})
	writeProjectSettings(t, `{"providers":{"mine":{"api":"openai-completions","baseUrl":"`+srv.URL+`/v1","apiKeyEnv":"MINE_KEY","models":[{"id":"m"}]}}}`)
	t.Setenv("MINE_KEY", "")
	_, errOut, code := run(t, "", "--no-session", "--provider", "mine", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, "rally: no key for mine: set MINE_KEY or run rally auth add mine\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "", "--no-session", "--provider", "openai", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, "no key for openai: set OPENAI_API_KEY or run rally auth add openai") {
		t.Errorf("openai: exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}

	// With the key stored, the run names provider/model once.
	if _, errOut, code := run(t, "", "auth", "add", "mine", "--id", "k", "--key", "sk-stored-000000001234"); code != 0 {
		t.Fatalf("auth add: %s", errOut)
	}
	out, errOut, code := run(t, "", "--no-session", "-p", "hi")
	if code != 0 || out != "paid answer\n" || strings.Count(errOut, "rally: using mine/m\n") != 1 {
		t.Errorf("stored key: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// sim says nothing about itself.
	_, errOut, _ = run(t, "", "--no-session", "--provider", "sim", "-p", "hi")
	if strings.Contains(errOut, "using") {
		t.Errorf("sim run announced itself: %q", errOut)
	}
}

// Item 2: a bare word never reaches a model, and usage mistakes exit 2.
func TestBareWordsAndUsageExit2(t *testing.T) {
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "paid answer"})
	writeProjectSettings(t, `{"providers":{"mine":{"api":"openai-completions","baseUrl":"`+srv.URL+`/v1","models":[{"id":"m"}]}}}`)
	if _, errOut, code := run(t, "", "auth", "add", "mine", "--id", "k", "--key", "sk-stored-000000001234"); code != 0 {
		t.Fatalf("auth add: %s", errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, `unknown command "version" for "rally"; did you mean "rally --version"?`},
		{[]string{"setings"}, `did you mean "settings"?`},
		{[]string{"modles"}, `did you mean "models"?`},
		{[]string{"hello"}, `to send it as a prompt: rally -p "hello"`},
		{[]string{"what", "now"}, `unknown command "what"`},
		{[]string{"settings", "gte"}, `unknown command "gte" for "rally settings"; did you mean "get"?`},
		{[]string{"settings", "get", "a", "b"}, "rally settings get: accepts at most 1 arg(s), received 2"},
		{[]string{"auth", "remove", "mine"}, "rally auth remove: accepts 2 arg(s), received 1"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"models", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"--thinking", "max", "-p", "hi"}, `--thinking must be one of off, minimal, low, medium, high, got "max"`},
		{[]string{"--tools", "read,rm", "-p", "hi"}, `--tools: unknown tool "rm"`},
		{[]string{"--tools", "read", "--no-tools", "-p", "hi"}, "give --tools or --no-tools, not both"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := run(t, "", tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d paid requests from typos", n)
	}
}

// The prompt flags reach the request: --system, --append-system-prompt,
// --thinking, --tools, --no-tools, and AGENTS.md/CLAUDE.md from the
// repository root down to the working directory.
func TestPromptFlagsReachTheModel(t *testing.T) {
	isolate(t)
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Root rule: run go test.\n"), 0o644)
	sub := filepath.Join(repo, "pkg", "deep")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(repo, "pkg", "CLAUDE.md"), []byte("Pkg rule: no globals.\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "AGENTS.md"), []byte("Deep rule: be terse.\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "CLAUDE.md"), []byte("never read: AGENTS.md wins in its directory\n"), 0o644)
	t.Chdir(sub)

	b := newBodies(t, llmtest.Step{Text: "ok"})
	mine := `{"providers":{"mine":{"api":"openai-completions","baseUrl":"` + b.url + `/v1","models":[{"id":"m","reasoning":true}]}}}`
	writeProjectSettings(t, mine)
	base := []string{"--no-session", "--provider", "mine"}
	runOK := func(extra ...string) chat {
		t.Helper()
		if _, errOut, code := run(t, "", append(append(append([]string{}, base...), extra...), "-p", "hi")...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		return b.last(t)
	}

	c := runOK()
	sys := c.system()
	root, pkg, deep := strings.Index(sys, "Root rule"), strings.Index(sys, "Pkg rule"), strings.Index(sys, "Deep rule")
	if !strings.HasPrefix(sys, "You are rally") || root < 0 || pkg < root || deep < pkg || strings.Contains(sys, "never read") {
		t.Errorf("system prompt does not hold the context files root first:\n%s", sys)
	}
	if c.toolNames() != "read,write,edit,bash" {
		t.Errorf("default tools %q", c.toolNames())
	}
	if c.ReasoningEffort != "" {
		t.Errorf("reasoning_effort %q without --thinking", c.ReasoningEffort)
	}

	c = runOK("--system", "You are a test.", "--append-system-prompt", "Answer in French.", "--tools", "bash,read", "--thinking", "high")
	sys = c.system()
	if !strings.HasPrefix(sys, "You are a test.") || !strings.HasSuffix(sys, "Answer in French.") || !strings.Contains(sys, "Deep rule") {
		t.Errorf("--system/--append-system-prompt:\n%s", sys)
	}
	if c.toolNames() != "bash,read" {
		t.Errorf("--tools bash,read sent %q", c.toolNames())
	}
	if c.ReasoningEffort != "high" {
		t.Errorf("--thinking high sent reasoning_effort %q", c.ReasoningEffort)
	}

	c = runOK("--no-tools")
	if c.toolNames() != "" || !strings.Contains(c.system(), "no tools") {
		t.Errorf("--no-tools sent tools %q, system %q", c.toolNames(), c.system())
	}

	// Outside a repository only the working directory's own file counts.
	lone := filepath.Join(t.TempDir(), "a", "b")
	os.MkdirAll(lone, 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(lone), "AGENTS.md"), []byte("Parent rule\n"), 0o644)
	os.WriteFile(filepath.Join(lone, "CLAUDE.md"), []byte("Own rule\n"), 0o644)
	t.Chdir(lone)
	writeProjectSettings(t, mine)
	sys = runOK().system()
	if !strings.Contains(sys, "Own rule") || strings.Contains(sys, "Parent rule") {
		t.Errorf("outside a repository:\n%s", sys)
	}
}
