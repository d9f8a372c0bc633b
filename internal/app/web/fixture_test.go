package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/settings"
)

// Session files for the tests are written line by line in the pi v3
// format (DESIGN §3.5), with chosen times, so that a timeline's bars and
// waits have known lengths.

// t0 is when fixture sessions start unless told otherwise.
var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fixture builds one session file.
type fixture struct {
	id     string
	start  time.Time
	lines  []string
	parent string
	n      int
}

// newFixture starts a session at t0; newFixtureAt at start.
func newFixture(id string) *fixture { return newFixtureAt(id, t0) }

func newFixtureAt(id string, start time.Time) *fixture {
	j := &fixture{id: id, start: start}
	j.lines = append(j.lines, fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":"/proj"}`, id, iso(start)))
	return j
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// at is a time ms milliseconds into the session.
func (j *fixture) at(ms int) time.Time { return j.start.Add(time.Duration(ms) * time.Millisecond) }

// entry appends an entry of type typ written at end, with the fields of
// body (a JSON object's members, without braces).
func (j *fixture) entry(typ string, end time.Time, body string) string {
	j.n++
	id := fmt.Sprintf("%08x", j.n)
	parent := "null"
	if j.parent != "" {
		parent = fmt.Sprintf("%q", j.parent)
	}
	line := fmt.Sprintf(`{"type":%q,"id":%q,"parentId":%s,"timestamp":%q`, typ, id, parent, iso(end))
	if body != "" {
		line += "," + body
	}
	j.lines = append(j.lines, line+"}")
	j.parent = id
	return id
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (j *fixture) user(end time.Time, text string) {
	j.entry("message", end, `"message":{"role":"user","content":[{"type":"text","text":`+js(text)+`}],"timestamp":`+fmt.Sprint(end.UnixMilli())+`}`)
}

// call is a model call from start to end; errMsg "" is a success with
// text, else a failure (retried: a retry replaced it).
func (j *fixture) call(start, end time.Time, text, errMsg string, retried bool) {
	stop, extra := "stop", ""
	if errMsg != "" {
		stop, extra = "error", `,"errorMessage":`+js(errMsg)
	}
	content := `[]`
	if text != "" {
		content = `[{"type":"text","text":` + js(text) + `}]`
	}
	body := `"message":{"role":"assistant","content":` + content + `,"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"` + stop + `"` + extra + `,"timestamp":` + fmt.Sprint(start.UnixMilli()) + `}`
	if retried {
		body += `,"retried":true`
	}
	j.entry("message", end, body)
}

// tool is a model call asking for a tool, then the tool's result.
func (j *fixture) tool(start, callEnd, end time.Time, name, args, output string) {
	j.entry("message", callEnd, `"message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":`+js(name)+`,"arguments":`+args+`}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":`+fmt.Sprint(start.UnixMilli())+`}`)
	j.entry("message", end, `"message":{"role":"toolResult","toolCallId":"call_1","toolName":`+js(name)+`,"content":[{"type":"text","text":`+js(output)+`}],"isError":false,"timestamp":`+fmt.Sprint(end.UnixMilli())+`}`)
}

func (j *fixture) compaction(end time.Time, summary string) {
	j.entry("compaction", end, `"summary":`+js(summary)+`,"firstKeptEntryId":"00000001","tokensBefore":4242`)
}

// name is the file name rally would give the session.
func (j *fixture) name() string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(iso(j.start)) + "_" + j.id + ".jsonl"
}

func (j *fixture) write(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, j.name())
	if err := os.WriteFile(p, []byte(strings.Join(j.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return j.name()
}

// A failed call is written as rally writes it: a failure before any output
// carries the time it failed as its message's time (call's start argument),
// and a retried failure is written when its wait is over (end).

// retrySession is a prompt whose first model call failed with an overload
// after 500 ms and was retried after the default 2 s wait.
func retrySession(id string) *fixture {
	j := newFixture(id)
	j.user(j.at(0), "What does rally do?")
	j.call(j.at(500), j.at(2500), "", "529 overloaded_error: Overloaded", true)
	j.call(j.at(2500), j.at(3500), "It retries.", "", false)
	return j
}

// env is a console over temporary settings files and a session directory.
type env struct {
	home, project, sessions string
	src                     settings.Sources
	srv                     *Server
	ts                      *httptest.Server
	client                  *http.Client // holds the token's cookie
}

// serveAuthed serves GET path in process, as a browser holding the
// console's cookie would send it.
func serveAuthed(srv *Server, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", srv.Base()+strings.TrimPrefix(path, "/"), nil)
	req.Host = "127.0.0.1"
	req.AddCookie(&http.Cookie{Name: cookieName(req), Value: srv.Token()})
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvKeys(t, nil)
}

// newEnvKeys is newEnv with a console that knows keys (Config.Keys).
func newEnvKeys(t testing.TB, keys []string) *env {
	t.Helper()
	return newEnvWith(t, Config{Token: "test-token-0123456789", Keys: keys})
}

// newEnvWith is newEnv with a console built from cfg, its settings and
// session directory filled in.
func newEnvWith(t testing.TB, cfg Config) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{home: filepath.Join(root, "home"), project: filepath.Join(root, "proj"), sessions: filepath.Join(root, "sessions")}
	e.src = settings.Locate(e.home, e.project, func(string) string { return "" })
	cfg.Settings, cfg.SessionDir = e.src, e.sessions
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.ts = httptest.NewServer(srv)
	t.Cleanup(e.ts.Close)
	jar, _ := cookiejar.New(nil)
	e.client = &http.Client{Jar: jar}
	resp, err := e.client.Get(e.ts.URL + "/?token=" + srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token visit: %s", resp.Status)
	}
	return e
}

// url is the address of path ("/settings") on the console, under its
// secret path, as the console's own links give it.
func (e *env) url(path string) string { return e.ts.URL + e.srv.Base() + strings.TrimPrefix(path, "/") }

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
