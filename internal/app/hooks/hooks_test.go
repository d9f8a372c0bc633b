//go:build unix

package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/rally-agent/rally/rpc/wire"
	"github.com/rally-agent/rally/session"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/settings"
)

// script writes an executable shell script to dir and returns its path.
// Hooks are real processes; the script is the user's program, rally
// itself runs it without a shell.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// logBuffer is a slog handler target safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLog() (*slog.Logger, *logBuffer) {
	var b logBuffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

func hook(timeout time.Duration, argv []string, on ...string) settings.Hook {
	return settings.Hook{On: on, Command: argv, TimeoutMs: int(timeout / time.Millisecond)}
}

func retryEnd(attempt int) Event {
	return session.AutoRetryEndEvent{Attempt: attempt, FinalError: "boom"}
}

func closeNow(t *testing.T, r *Runner) {
	t.Helper()
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestEventOnStdinAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, dir, "h", `cat > "$1/stdin"; env > "$1/env"`)
	env := []string{"PATH=" + os.Getenv("PATH"), "KEEP=1", "RALLY_EVENT=stale", "RALLY_SESSION_FILE=/stale"}
	r := New(Config{
		Hooks: []settings.Hook{hook(5*time.Second, []string{sh, dir}, string(session.AutoRetryEnd))},
		Grace: 10 * time.Second,
		Env:   env,
	})
	e := retryEnd(3)
	r.Handle(Source{ID: "sid", File: "/s/f.jsonl"}, session.AgentStartEvent{}) // no hook runs on it
	r.Handle(Source{ID: "sid", File: "/s/f.jsonl"}, e)
	closeNow(t, r)

	got, err := os.ReadFile(filepath.Join(dir, "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	want := wire.AppendEvent(nil, e) // the line --mode json writes
	if string(got) != string(want)+"\n" {
		t.Errorf("stdin %q\nwant  %q", got, want)
	}
	vars, _ := os.ReadFile(filepath.Join(dir, "env"))
	lines := strings.Split(string(vars), "\n")
	for _, v := range []string{"RALLY_EVENT=auto_retry_end", "RALLY_SESSION_ID=sid", "RALLY_SESSION_FILE=/s/f.jsonl", "KEEP=1"} {
		if !slices.Contains(lines, v) {
			t.Errorf("no %s in the hook's environment:\n%s", v, vars)
		}
	}
	if strings.Contains(string(vars), "stale") {
		t.Errorf("a stale event variable reached the hook:\n%s", vars)
	}
	var at int64
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "RALLY_EVENT_TIME="); ok {
			at, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if d := time.Since(time.UnixMilli(at)); d < 0 || d > time.Hour {
		t.Errorf("RALLY_EVENT_TIME %d is not the time of the event", at)
	}
}

func TestOrderPerHook(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	sh := script(t, dir, "h", `cat >> "$1"`)
	r := New(Config{Hooks: []settings.Hook{hook(5*time.Second, []string{sh, out}, string(session.AutoRetryEnd))}, Grace: 30 * time.Second})
	const n = 20
	for i := 1; i <= n; i++ {
		r.Handle(Source{}, retryEnd(i))
	}
	closeNow(t, r)
	b, _ := os.ReadFile(out)
	var got []int
	for line := range strings.Lines(string(b)) {
		var e struct{ Attempt int }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, e.Attempt)
	}
	if len(got) != n || !slices.IsSorted(got) {
		t.Errorf("the hook saw attempts %v, want 1..%d in order", got, n)
	}
}

// TestBoundOnProcesses runs five hooks that each hold on until released,
// with room for two processes: two start, three wait for a slot and never
// start until one ends.
func TestBoundOnProcesses(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	sh := script(t, dir, "h", `echo "start $2" >> "$1/log"; touch "$1/started.$2"
while [ ! -e "$1/go" ]; do sleep 0.005; done
echo "end $2" >> "$1/log"`)
	var hooks []settings.Hook
	for i := range 5 {
		hooks = append(hooks, hook(20*time.Second, []string{sh, dir, strconv.Itoa(i)}, string(session.AgentSettled)))
	}
	r := New(Config{Hooks: hooks, MaxProcs: 2, Grace: 30 * time.Second})
	started := func() int { m, _ := filepath.Glob(filepath.Join(dir, "started.*")); return len(m) }
	r.Handle(Source{}, session.AgentSettledEvent{})
	proctest.Wait(t, "two hooks running and three waiting", func() bool { return started() == 2 && r.queued.Load() == 3 })
	if n := started(); n != 2 {
		t.Fatalf("%d hooks started with room for 2", n)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	closeNow(t, r)
	b, _ := os.ReadFile(log)
	running, most, starts := 0, 0, 0
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "start") {
			running++
			starts++
		} else {
			running--
		}
		most = max(most, running)
	}
	if most != 2 || starts != 5 {
		t.Errorf("at most %d at once over %d runs, want 2 over 5:\n%s", most, starts, b)
	}
}

// TestDropsWhenBehind fills a stuck hook's queue: Handle never waits, the
// excess is dropped, counted, logged and reported once the hook moves on.
func TestDropsWhenBehind(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, dir, "h", `echo run >> "$1/runs"; touch "$1/started"
while [ ! -e "$1/go" ]; do sleep 0.005; done`)
	lg, logs := newLog()
	var mu sync.Mutex
	var reported []*Error
	r := New(Config{
		Hooks:     []settings.Hook{hook(20*time.Second, []string{sh, dir}, string(session.AutoRetryStart))},
		QueueLen:  2,
		Grace:     30 * time.Second,
		Log:       lg,
		OnFailure: func(e *Error) { mu.Lock(); reported = append(reported, e); mu.Unlock() },
	})
	start := session.AutoRetryStartEvent{}
	r.Handle(Source{}, start)
	proctest.Wait(t, "the first run", func() bool { return exists(filepath.Join(dir, "started")) })
	for range 9 { // 2 fit in the queue, 7 do not
		r.Handle(Source{}, start)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	closeNow(t, r)
	runs, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if n := strings.Count(string(runs), "run"); n != 3 {
		t.Errorf("%d runs, want 3 (one running, two queued)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || reported[0].Dropped != 7 || !errors.Is(reported[0], ErrDropped) {
		t.Fatalf("reported %v, want one drop of 7", reported)
	}
	if want := "hook hooks[0] (" + sh + ") on auto_retry_start: dropped 7 event(s): queue full"; reported[0].Error() != want {
		t.Errorf("error %q\nwant  %q", reported[0].Error(), want)
	}
	if !strings.Contains(logs.String(), "dropped 7 event(s)") {
		t.Errorf("log: %s", logs)
	}
}

func TestFailureIsLoggedAndReported(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, dir, "h", `echo "cannot reach the chat server" >&2; exit 3`)
	lg, logs := newLog()
	got := make(chan *Error, 1)
	r := New(Config{
		Hooks:     []settings.Hook{hook(5*time.Second, []string{sh}, string(session.AgentSettled)), hook(5*time.Second, []string{filepath.Join(dir, "missing")}, string(session.AgentSettled))},
		Grace:     10 * time.Second,
		Log:       lg,
		OnFailure: func(e *Error) { got <- e },
	})
	r.Handle(Source{}, session.AgentSettledEvent{})
	var errs []string
	for range 2 {
		errs = append(errs, (<-got).Error())
	}
	closeNow(t, r)
	slices.Sort(errs)
	if !strings.HasPrefix(errs[0], "hook hooks[0] ("+sh+") on agent_settled: exit status 3") ||
		!strings.HasPrefix(errs[1], "hook hooks[1] (") || !strings.Contains(errs[1], "no such file") {
		t.Errorf("errors %q", errs)
	}
	if !strings.Contains(logs.String(), "cannot reach the chat server") {
		t.Errorf("the hook's stderr is not in the log:\n%s", logs)
	}
}

// TestTimeoutKillsTheGroup: a hook past its timeout is killed with the
// child it started.
func TestTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	// The child outlives proctest.Dead's 10 s wait by far, so it is gone
	// only if the group was killed.
	sh := script(t, dir, "h", `sleep 60 & echo $! > "$1/child"; wait`)
	r := New(Config{Hooks: []settings.Hook{hook(200*time.Millisecond, []string{sh, dir}, string(session.AgentSettled))}})
	defer r.Close(context.Background())
	res := r.Test(context.Background(), Source{}, session.AgentSettledEvent{})
	if len(res) != 1 || res[0].Err == nil || !errors.Is(res[0].Err, ErrTimeout) {
		t.Fatalf("results %+v, want a timeout", res)
	}
	if res[0].Duration >= 10*time.Second || res[0].ExitCode != -1 {
		t.Errorf("ran %v, exit %d", res[0].Duration, res[0].ExitCode)
	}
	if got := res[0].Err.Error(); got != "hook hooks[0] ("+sh+") on agent_settled: killed at its timeout (200ms)" {
		t.Errorf("error %q", got)
	}
	assertGone(t, filepath.Join(dir, "child"))
}

// assertGone waits for the process whose pid is in file to be gone.
func assertGone(t *testing.T, file string) {
	t.Helper()
	proctest.Dead(t, proctest.Pid(t, file))
}

// TestCloseGrace: Close waits for a hook that finishes within the grace,
// and kills one that does not, after about the grace.
func TestCloseGrace(t *testing.T) {
	t.Run("finishes", func(t *testing.T) {
		dir := t.TempDir()
		sh := script(t, dir, "h", `sleep 0.2; touch "$1/done"`)
		r := New(Config{Hooks: []settings.Hook{hook(5*time.Second, []string{sh, dir}, string(session.AgentSettled))}, Grace: 20 * time.Second})
		r.Handle(Source{}, session.AgentSettledEvent{})
		closeNow(t, r)
		if !exists(filepath.Join(dir, "done")) {
			t.Error("Close returned before the hook finished")
		}
	})
	t.Run("killed", func(t *testing.T) {
		dir := t.TempDir()
		sh := script(t, dir, "h", `echo $$ > "$1/pid"; sleep 10`)
		lg, logs := newLog()
		r := New(Config{Hooks: []settings.Hook{hook(60*time.Second, []string{sh, dir}, string(session.AgentSettled))}, Grace: 100 * time.Millisecond, Log: lg})
		r.Handle(Source{}, session.AgentSettledEvent{})
		r.Handle(Source{}, session.AgentSettledEvent{}) // queued behind it
		proctest.Wait(t, "the hook to start", func() bool { return exists(filepath.Join(dir, "pid")) })
		begin := time.Now()
		err := r.Close(context.Background())
		took := time.Since(begin)
		if !errors.Is(err, ErrExit) || err.Error() != "hooks: killed at exit after the 100ms grace: 1 running hook(s) killed, 1 queued event(s) dropped" {
			t.Errorf("close: %v", err)
		}
		if took < 100*time.Millisecond || took > 5*time.Second {
			t.Errorf("close took %v with a 100ms grace and a 10s hook", took)
		}
		assertGone(t, filepath.Join(dir, "pid"))
		if !strings.Contains(logs.String(), "1 running hook(s) killed") {
			t.Errorf("log: %s", logs)
		}
		r.Handle(Source{}, session.AgentSettledEvent{}) // after Close: ignored, no panic
	})
}

func TestTypesMatchTheSettingsSchema(t *testing.T) {
	var schema struct {
		Defs struct {
			Hook struct {
				Properties struct {
					On struct {
						Items struct {
							Enum []string `json:"enum"`
						} `json:"items"`
					} `json:"on"`
				} `json:"properties"`
			} `json:"Hook"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(settings.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	enum := schema.Defs.Hook.Properties.On.Items.Enum
	if !slices.Equal(enum, Types()) {
		t.Errorf("schema enum %v\nTypes()     %v", enum, Types())
	}
	for _, name := range Types() {
		e, ok := Sample(name)
		if !ok || typeOf(e) != name {
			t.Errorf("no sample for %s", name)
		}
		var m map[string]any
		if err := json.Unmarshal(Encode(e), &m); err != nil || m["type"] != name {
			t.Errorf("sample %s encodes as %s (%v)", name, Encode(e), err)
		}
	}
	if _, ok := Sample("agent_ended"); ok {
		t.Error("a sample for an unknown event")
	}
}

// TestErrorParts: Name and Reason are the parts Error is made of, for a
// caller (the UI's status line) that words the rest itself.
func TestErrorParts(t *testing.T) {
	for _, c := range []struct {
		err                *Error
		name, reason, full string
	}{
		{&Error{Hook: 1, Command: "notify-send", Event: "auto_retry_end", Err: errors.New("exit status 1")},
			"hooks[1] (notify-send)", "exit status 1", "hook hooks[1] (notify-send) on auto_retry_end: exit status 1"},
		{&Error{Hook: 0, Command: "log.sh", Event: "message_update", Dropped: 3, Err: ErrDropped},
			"hooks[0] (log.sh)", "dropped 3 event(s): queue full", "hook hooks[0] (log.sh) on message_update: dropped 3 event(s): queue full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Name(); got != c.name {
				t.Errorf("Name %q, want %q", got, c.name)
			}
			if got := c.err.Reason(); got != c.reason {
				t.Errorf("Reason %q, want %q", got, c.reason)
			}
			if got := c.err.Error(); got != c.full {
				t.Errorf("Error %q, want %q", got, c.full)
			}
		})
	}
}
