package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Agent is a program that speaks the RPC protocol of DESIGN §6, and how to
// point it at the fake LLM.
type Agent struct {
	// Name labels the agent's column in the report.
	Name string
	// Argv is the command; "--mode rpc" and the provider flags are added.
	Argv []string
	// Pi configures the agent the way the pi coding agent is configured: a
	// custom provider in $PI_CODING_AGENT_DIR/models.json and the retry
	// settings in its settings.json. Otherwise it is configured as rally:
	// $RALLY_HOME/settings.json and --api/--base-url/--model.
	Pi bool
}

// tuning is what a measurement sets in the agent's settings.
type tuning struct {
	baseDelayMs int // retry.baseDelayMs; 0 keeps the default
}

// fakeModel is the model id every agent is pointed at.
const fakeModel = "fake-model"

// command returns the agent's command, with a scratch home under dir
// holding its settings for the fake LLM at baseURL and a working directory
// of its own, plus args.
func (a Agent) command(ctx context.Context, dir, baseURL string, t tuning, args ...string) (*exec.Cmd, error) {
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "cwd")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	retrySettings := map[string]any{"enabled": true, "maxRetries": 3}
	if t.baseDelayMs > 0 {
		retrySettings["baseDelayMs"] = t.baseDelayMs
	}
	env := cleanEnv("HOME=" + home)
	var full []string
	if a.Pi {
		agentDir := filepath.Join(home, "pi-agent")
		models := map[string]any{"providers": map[string]any{"fake": map[string]any{
			"baseUrl": baseURL + "/v1", "api": "openai-completions", "apiKey": "fake-key",
			"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]any{"id": fakeModel, "reasoning": false, "contextWindow": 1 << 20, "maxTokens": 1 << 16}},
		}}}
		if err := writeJSON(filepath.Join(agentDir, "models.json"), models); err != nil {
			return nil, err
		}
		if err := writeJSON(filepath.Join(agentDir, "settings.json"), map[string]any{"retry": retrySettings}); err != nil {
			return nil, err
		}
		env = append(env, "PI_CODING_AGENT_DIR="+agentDir, "PI_SKIP_VERSION_CHECK=1", "PI_OFFLINE=1")
		full = append(full, "--provider", "fake", "--model", fakeModel)
	} else {
		rallyHome := filepath.Join(home, ".rally")
		// The model's maxTokens as pi's above: rally caps a stream at 4×
		// maxTokens of output (8192 when unknown), which a 50k-delta run
		// passes.
		providers := map[string]any{"fake": map[string]any{
			"api": "openai-completions", "baseUrl": baseURL + "/v1",
			"models": []any{map[string]any{"id": fakeModel, "contextWindow": 1 << 20, "maxTokens": 1 << 16}},
		}}
		if err := writeJSON(filepath.Join(rallyHome, "settings.json"), map[string]any{"retry": retrySettings, "providers": providers}); err != nil {
			return nil, err
		}
		env = append(env, "RALLY_HOME="+rallyHome)
		full = append(full, "--provider", "fake", "--model", fakeModel)
	}
	full = append(append([]string{"--mode", "rpc"}, full...), args...)
	cmd := exec.CommandContext(ctx, a.Argv[0], append(a.Argv[1:len(a.Argv):len(a.Argv)], full...)...)
	cmd.Dir, cmd.Env = cwd, env
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// cleanEnv is the process's environment without provider keys or agent
// homes, plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || k == "HOME" || k == "RALLY_HOME" || strings.HasPrefix(k, "PI_") || k == "RALLY_REDIS_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// proc is an agent process driven line by line: lines are matched in
// place, never decoded unless they are responses, and a long one is not
// even copied (lines.go), so that reading is not what a measurement
// measures.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *lines
	stderr *limited
}

// maxLine bounds one output line (the default event mode's message_update
// at 50,000 deltas is about half a megabyte).
const maxLine = 256 << 20

func startProc(cmd *exec.Cmd) (*proc, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	p := &proc{cmd: cmd, in: in, out: newLines(out, maxLine), stderr: &limited{n: 64 << 10}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", cmd.Path, err)
	}
	return p, nil
}

func (p *proc) send(line string) error {
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		return p.fail(fmt.Errorf("write command: %w", err))
	}
	return nil
}

// next returns the next line, valid until the following call.
func (p *proc) next() ([]byte, error) {
	l, err := p.out.next()
	if err != nil {
		return nil, p.fail(fmt.Errorf("read output: %w", err))
	}
	return l, nil
}

// nextType returns the type of the next line, reading no more of a long
// line than its ends.
func (p *proc) nextType() (string, error) {
	t, err := p.out.nextType()
	if err != nil {
		return "", p.fail(fmt.Errorf("read output: %w", err))
	}
	return t, nil
}

// fail adds the start of what the process said on stderr to err: where
// a crash says what it was.
func (p *proc) fail(err error) error {
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return fmt.Errorf("%w (stderr: %s)", err, s)
	}
	return err
}

// event reads up to the next event of type typ and returns its line.
func (p *proc) event(typ string) ([]byte, error) {
	for {
		l, err := p.next()
		if err != nil {
			return nil, err
		}
		if lineType(l) == typ {
			return l, nil
		}
	}
}

// response is an RPC response line.
type response struct {
	ID      string          `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`
}

// call sends cmd with id and reads up to its response: the one that
// echoes id, or one for the same command without an id (pi answers an
// unknown command so).
func (p *proc) call(id, cmd string) (response, error) {
	var c struct{ Type string }
	if err := json.Unmarshal([]byte(cmd), &c); err != nil {
		return response{}, fmt.Errorf("bench: bad command %s: %w", cmd, err)
	}
	if err := p.send(cmd); err != nil {
		return response{}, err
	}
	for {
		l, err := p.event("response")
		if err != nil {
			return response{}, err
		}
		var r response
		if err := json.Unmarshal(l, &r); err != nil {
			return response{}, fmt.Errorf("bench: bad response %.200s: %w", l, err)
		}
		if r.ID == id || r.ID == "" && r.Command == c.Type {
			return r, nil
		}
	}
}

// stop closes stdin and waits for the process to exit.
func (p *proc) stop() error {
	_ = p.in.Close()
	p.out.drain()
	return p.cmd.Wait()
}

// lineType is the top-level "type" of a JSON line, read from where the
// two agents put it: rally writes it last, pi first. A nested object's
// "type" can be neither the first key of the line nor followed by the
// line's closing brace.
func lineType(l []byte) string {
	if rest, ok := bytes.CutPrefix(l, []byte(`{"type":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			return string(rest[:i])
		}
	}
	if head, ok := bytes.CutSuffix(l, []byte(`"}`)); ok {
		if i := bytes.LastIndex(head, []byte(`"type":"`)); i >= 0 && bytes.IndexByte(head[i+8:], '"') < 0 {
			return string(head[i+8:])
		}
	}
	if len(l) < 1<<16 {
		var v struct{ Type string }
		if json.Unmarshal(l, &v) == nil {
			return v.Type
		}
	}
	return ""
}

// limited keeps the first n bytes written to it and drops the rest. It
// is written by exec's copying goroutine and read by the bench.
type limited struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int
}

func (l *limited) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limited) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
