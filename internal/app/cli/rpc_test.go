package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// rpcProc is `rally --mode rpc` run as a child process (this test binary
// acting as rally), driven line by line.
type rpcProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte // stdout, split at LF only
	all   [][]byte    // every stdout line read so far

	mu     sync.Mutex
	stderr bytes.Buffer
}

func startRPC(t *testing.T, args ...string) *rpcProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--mode", "rpc"}, args...)...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &rpcProc{t: t, cmd: cmd, in: in, lines: make(chan []byte, 4096)}
	cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		// A large buffer, split by hand at LF only: never at U+2028.
		buf := make([]byte, 0, 1<<20)
		chunk := make([]byte, 1<<16)
		for {
			n, err := out.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				p.lines <- append([]byte(nil), buf[:i]...)
				buf = buf[i+1:]
			}
			if err != nil {
				if len(buf) > 0 {
					p.lines <- append([]byte(nil), buf...) // a line without LF: a bug the checks will catch
				}
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		if !p.exited(10 * time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (p *rpcProc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *rpcProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// until reads lines until match accepts one; every line must be a JSON
// object with a string type (stdout carries protocol lines only).
func (p *rpcProc) until(what string, match func(m map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case b, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout ended waiting for %s; stderr:\n%s", what, p.stderrText())
			}
			p.all = append(p.all, b)
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				p.t.Fatalf("stdout line is not a JSON object: %.200q", b)
			}
			if _, ok := m["type"].(string); !ok {
				p.t.Fatalf("stdout line without a type: %.200s", b)
			}
			if match(m) {
				return m
			}
		case <-deadline.C:
			p.t.Fatalf("timed out waiting for %s; stderr:\n%s", what, p.stderrText())
		}
	}
}

func (p *rpcProc) response(id string) map[string]any {
	p.t.Helper()
	return p.until("response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

func (p *rpcProc) event(typ string) map[string]any {
	p.t.Helper()
	return p.until(typ, func(m map[string]any) bool { return m["type"] == typ })
}

// call sends a command with an id and returns its response.
func (p *rpcProc) call(id, cmd string) map[string]any {
	p.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(cmd), &m); err != nil {
		p.t.Fatal(err)
	}
	m["id"] = id
	b, _ := json.Marshal(m)
	p.send(string(b))
	return p.response(id)
}

// exited waits for the process to end and reports whether it did.
func (p *rpcProc) exited(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		for range p.lines { // drain, so the process never blocks on stdout
		}
		p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func TestRPCRobustness(t *testing.T) {
	isolate(t)
	p := startRPC(t, "--no-session")
	big := strings.Repeat("x", 10<<20)
	tests := []struct {
		name    string
		line    string
		id      string // of the response to wait for; "" waits for the next response
		success bool
		command string
		errHas  string
	}{
		{name: "not JSON", line: "hello there", command: "parse", errHas: "invalid JSON"},
		{name: "JSON not an object", line: `[1,2,3]`, command: "parse", errHas: "must be a JSON object"},
		{name: "a JSON string", line: `"get_state"`, command: "parse", errHas: "got a string"},
		{name: "unknown command", line: `{"id":"u1","type":"fly"}`, id: "u1", command: "fly", errHas: "unknown command: fly"},
		{name: "missing field", line: `{"id":"m1","type":"prompt"}`, id: "m1", command: "prompt", errHas: `missing field "message"`},
		{name: "mistyped field", line: `{"id":"m2","type":"set_auto_retry","enabled":"yes"}`, id: "m2", command: "set_auto_retry", errHas: `"enabled" must be a boolean`},
		{name: "mistyped id", line: `{"id":5,"type":"get_state"}`, command: "parse", errHas: `"id" must be a string`},
		{name: "10 MB of garbage", line: big, command: "parse", errHas: "invalid JSON"},
		{name: "10 MB command", line: `{"id":"b1","type":"get_state","pad":"` + big + `"}`, id: "b1", success: true, command: "get_state"},
		{name: "invalid UTF-8", line: "{\"id\":\"v1\",\"type\":\"set_session_name\",\"name\":\"caf\xe9\"}", id: "v1", command: "set_session_name", errHas: "not valid UTF-8"},
		{name: "U+2028 inside a string", line: "{\"id\":\"l1\",\"type\":\"set_session_name\",\"name\":\"one\u2028two\u2029three\"}", id: "l1", success: true, command: "set_session_name"},
		{name: "CRLF", line: "{\"id\":\"c1\",\"type\":\"get_state\"}\r", id: "c1", success: true, command: "get_state"},
		{name: "empty name", line: `{"id":"n1","type":"set_session_name","name":"  "}`, id: "n1", command: "set_session_name", errHas: "cannot be empty"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			p.send(tt.line)
			var r map[string]any
			if tt.id != "" {
				r = p.response(tt.id)
			} else {
				r = p.until("a response", func(m map[string]any) bool { return m["type"] == "response" })
				if _, has := r["id"]; has {
					t.Errorf("response to a line without an id has one: %v", r["id"])
				}
			}
			if r["success"] != tt.success || r["command"] != tt.command {
				t.Errorf("response %.300v", r)
			}
			if errText, _ := r["error"].(string); !strings.Contains(errText, tt.errHas) || tt.success != (errText == "") {
				t.Errorf("error %q, want …%s…", errText, tt.errHas)
			}
			// Still serving.
			id := fmt.Sprintf("alive%d", i)
			if r := p.call(id, `{"type":"get_state"}`); r["success"] != true {
				t.Fatalf("get_state after %s: %v", tt.name, r)
			}
		})
	}
	p.t = t
	st := p.call("final", `{"type":"get_state"}`)["data"].(map[string]any)
	if st["sessionName"] != "one\u2028two\u2029three" {
		t.Errorf("sessionName %q", st["sessionName"])
	}
	// A line longer than the limit is skipped up to its line break.
	p.send(strings.Repeat("y", 65<<20))
	r := p.until("the too-long line's response", func(m map[string]any) bool { return m["type"] == "response" })
	if r["command"] != "parse" || !strings.Contains(r["error"].(string), "longer than") {
		t.Errorf("too-long line: %v", r)
	}
	if r := p.call("after-long", `{"type":"get_state"}`); r["success"] != true {
		t.Errorf("get_state after the too-long line: %v", r)
	}
	// A blank line is no command at all: the next response is get_state's.
	p.send("")
	p.send(`{"id":"after-blank","type":"get_state"}`)
	if r := p.until("a response", func(m map[string]any) bool { return m["type"] == "response" }); r["id"] != "after-blank" {
		t.Errorf("blank line answered: %v", r)
	}
}

// TestRPCEndsCleanly: EOF on stdin, SIGTERM and SIGINT each abort the run
// in progress (the assistant message ends aborted, the run settles) and
// end rally with exit status 0.
func TestRPCEndsCleanly(t *testing.T) {
	for _, how := range []string{"EOF", "SIGTERM", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			isolate(t)
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "this answer never ends"})
			p := startRPC(t, "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
			p.call("p", `{"type":"prompt","message":"go"}`)
			p.event("message_update") // streaming, then stalled
			switch how {
			case "EOF":
				p.in.Close()
			case "SIGTERM":
				p.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				p.cmd.Process.Signal(syscall.SIGINT)
			}
			end := p.until("the assistant's message_end", func(m map[string]any) bool {
				msg, _ := m["message"].(map[string]any)
				return m["type"] == "message_end" && msg["role"] == "assistant"
			})
			if msg := end["message"].(map[string]any); msg["stopReason"] != "aborted" {
				t.Errorf("message_end %v", msg)
			}
			p.event("agent_settled")
			if !p.exited(10 * time.Second) {
				t.Fatal("rally did not exit")
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit status %d; stderr:\n%s", code, p.stderrText())
			}
		})
	}
}

// TestRPCStdoutIsProtocolOnly runs a prompt with a retry and --verbose
// logging: every stdout line is a response or an event; the log lines go
// to stderr.
func TestRPCStdoutIsProtocolOnly(t *testing.T) {
	isolate(t)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"baseDelayMs":1}}`), 0o644)
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "fine"})
	p := startRPC(t, "--verbose", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
	p.call("p", `{"type":"prompt","message":"go"}`)
	p.event("auto_retry_end")
	p.event("agent_settled")
	p.in.Close()
	if !p.exited(10 * time.Second) {
		t.Fatal("rally did not exit")
	}
	events := map[string]bool{}
	for _, line := range p.all {
		var m map[string]any
		json.Unmarshal(line, &m)
		events[m["type"].(string)] = true
	}
	for _, want := range []string{"response", "agent_start", "message_update", "auto_retry_start", "auto_retry_end", "agent_settled"} {
		if !events[want] {
			t.Errorf("no %s line on stdout", want)
		}
	}
	if !strings.Contains(p.stderrText(), "retry decision") {
		t.Errorf("--verbose logged nothing to stderr:\n%s", p.stderrText())
	}
}

// TestRPCEveryCommand sends each command as a raw line and checks the
// response's shape against the reference protocol's.
func TestRPCEveryCommand(t *testing.T) {
	isolate(t)
	p := startRPC(t)
	// A conversation first, so every command has something to show.
	p.call("p0", `{"type":"prompt","message":"What does rally do?"}`)
	p.event("agent_settled")
	keys := func(m any) string {
		obj, _ := m.(map[string]any)
		var ks []string
		for k := range obj {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	// disposition checks pi 1.6's data of prompt, steer and follow_up.
	disposition := func(want string) func(*testing.T, any) {
		return func(t *testing.T, d any) {
			if m, _ := d.(map[string]any); m["disposition"] != want || len(m) != 1 {
				t.Errorf("data %v, want {disposition:%s}", d, want)
			}
		}
	}
	tests := []struct {
		cmd     string
		success bool
		check   func(t *testing.T, data any)
	}{
		{`{"type":"get_state"}`, true, func(t *testing.T, d any) {
			want := "autoCompactionEnabled,autoRetryEnabled,followUpMode,isCompacting,isRetrying,isStreaming,messageCount,model,pendingMessageCount,retryAttempt,sessionFile,sessionId,steeringMode,thinkingLevel"
			if got := keys(d); got != want {
				t.Errorf("keys %s\nwant %s", got, want)
			}
			st := d.(map[string]any)
			if keys(st["model"]) != "api,baseUrl,contextWindow,cost,id,input,maxTokens,name,provider,reasoning" ||
				st["thinkingLevel"] != "off" || st["steeringMode"] != "one-at-a-time" || st["messageCount"] != 2.0 {
				t.Errorf("state %v", st)
			}
		}},
		{`{"type":"get_messages"}`, true, func(t *testing.T, d any) {
			if ms := d.(map[string]any)["messages"].([]any); len(ms) != 2 {
				t.Errorf("messages %v", ms)
			}
		}},
		{`{"type":"get_last_assistant_text"}`, true, func(t *testing.T, d any) {
			if text, _ := d.(map[string]any)["text"].(string); !strings.Contains(text, "rally") {
				t.Errorf("text %v", d)
			}
		}},
		{`{"type":"get_session_stats"}`, true, func(t *testing.T, d any) {
			want := "assistantMessages,contextUsage,cost,sessionFile,sessionId,tokens,toolCalls,toolResults,totalMessages,userMessages"
			if got := keys(d); got != want {
				t.Errorf("keys %s\nwant %s", got, want)
			}
			st := d.(map[string]any)
			if keys(st["tokens"]) != "cacheRead,cacheWrite,input,output,total" || keys(st["contextUsage"]) != "contextWindow,percent,tokens" {
				t.Errorf("stats %v", st)
			}
		}},
		{`{"type":"get_available_models"}`, true, func(t *testing.T, d any) {
			ms := d.(map[string]any)["models"].([]any)
			if len(ms) == 0 || ms[0].(map[string]any)["id"] != "sim" {
				t.Errorf("models %v", ms)
			}
		}},
		{`{"type":"set_model","provider":"sim","modelId":"sim"}`, true, func(t *testing.T, d any) {
			if d.(map[string]any)["id"] != "sim" {
				t.Errorf("model %v", d)
			}
		}},
		{`{"type":"set_model","provider":"openai","modelId":"gpt-4.1"}`, false, nil}, // no key: not available
		{`{"type":"set_auto_compaction","enabled":false}`, true, nil},
		{`{"type":"set_auto_retry","enabled":false}`, true, nil},
		{`{"type":"abort_retry"}`, true, nil},
		{`{"type":"steer","message":"a"}`, true, disposition("queued")},
		{`{"type":"follow_up","message":"b"}`, true, disposition("queued")},
		{`{"type":"set_session_name","name":"work"}`, true, nil},
		{`{"type":"abort"}`, true, nil},
		{`{"type":"compact"}`, true, func(t *testing.T, d any) {
			if keys(d) != "firstKeptEntryId,summary,tokensBefore" {
				t.Errorf("compact %v", d)
			}
		}},
		{`{"type":"new_session"}`, true, func(t *testing.T, d any) {
			if keys(d) != "cancelled" || d.(map[string]any)["cancelled"] != false {
				t.Errorf("new_session %v", d)
			}
		}},
		{`{"type":"get_state"}`, true, func(t *testing.T, d any) {
			st := d.(map[string]any)
			if st["messageCount"] != 0.0 || st["autoRetryEnabled"] != false || st["autoCompactionEnabled"] != false || st["sessionName"] != nil {
				t.Errorf("fresh session %v", st)
			}
		}},
		{`{"type":"prompt","message":"hi","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`, true, disposition("started")},
	}
	for i, tt := range tests {
		name := strings.SplitN(strings.TrimPrefix(tt.cmd, `{"type":"`), `"`, 2)[0]
		t.Run(name, func(t *testing.T) {
			p.t = t
			id := fmt.Sprintf("c%d", i)
			r := p.call(id, tt.cmd)
			if r["success"] != tt.success || r["command"] != name {
				t.Fatalf("response %v", r)
			}
			if !tt.success {
				if e, _ := r["error"].(string); e == "" {
					t.Errorf("failure without an error: %v", r)
				}
				return
			}
			if tt.check != nil {
				tt.check(t, r["data"])
			} else if _, has := r["data"]; has {
				t.Errorf("unexpected data: %v", r["data"])
			}
		})
	}
	p.t = t
	p.event("agent_settled") // the image prompt's run
}
