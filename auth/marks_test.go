package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as a marking process for
// TestMarksConcurrentProcesses.
func TestMain(m *testing.M) {
	if path := os.Getenv("AUTH_TEST_MARKER"); path != "" {
		os.Exit(marker(path, os.Getenv("AUTH_TEST_WORKER")))
	}
	os.Exit(m.Run())
}

// marksPerWorker is how many marks each child process writes.
const marksPerWorker = 10

// marker waits for its stdin to close (the start signal, so that every
// child marks at once) and then writes its marks, each under its own id.
func marker(path, worker string) int {
	io.Copy(io.Discard, os.Stdin)
	fm := &FileMarks{Path: path}
	for i := range marksPerWorker {
		m := Mark{Provider: "openai", ID: fmt.Sprintf("w%s-%d", worker, i), Until: time.Now().Add(time.Hour), Reason: "test"}
		if err := fm.Block(context.Background(), m); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// clock is a settable time for tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)} }

func TestMarksExpire(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	fm := &FileMarks{Path: filepath.Join(t.TempDir(), "auth-marks.json"), Now: clk.now}
	must(t, fm.Block(ctx, Mark{Provider: "openai", ID: "a", Until: clk.t.Add(time.Hour), Reason: "r"}))
	must(t, fm.Block(ctx, Mark{Provider: "openai", ID: "b", Until: clk.t.Add(3 * time.Hour)}))
	must(t, fm.Block(ctx, Mark{Provider: "groq", ID: "a", Until: clk.t.Add(time.Hour)}))
	must(t, fm.Block(ctx, Mark{Provider: "openai", ID: "past", Until: clk.t.Add(-time.Second)}))

	tests := []struct {
		name     string
		after    time.Duration
		provider string
		want     string
	}{
		{"now", 0, "openai", "a b"},
		{"all providers", 0, "", "a a b"},
		{"other provider", 0, "groq", "a"},
		{"after the first reset", time.Hour, "openai", "b"},
		{"after every reset", 2 * time.Hour, "openai", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.advance(tt.after)
			ms, err := fm.Blocked(ctx, tt.provider)
			must(t, err)
			var ids []string
			for _, m := range ms {
				ids = append(ids, m.ID)
			}
			if got := strings.Join(ids, " "); got != tt.want {
				t.Errorf("blocked %q, want %q", got, tt.want)
			}
		})
	}
	// A write prunes what has expired.
	must(t, fm.Block(ctx, Mark{Provider: "openai", ID: "c", Until: clk.t.Add(time.Hour)}))
	all, err := fm.read()
	must(t, err)
	if len(all) != 1 || all[0].ID != "c" {
		t.Errorf("after a write the file holds %+v, want only c", all)
	}
	if fi, _ := os.Stat(fm.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("marks file mode %v", fi.Mode())
	}
}

func TestMarkKeepsLaterEnd(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	fm := &FileMarks{Path: filepath.Join(t.TempDir(), "m.json"), Now: clk.now}
	for _, h := range []int{2, 1, 3} {
		must(t, fm.Block(ctx, Mark{Provider: "p", ID: "a", Key: "f", Until: clk.t.Add(time.Duration(h) * time.Hour), Reason: fmt.Sprint(h)}))
	}
	ms, err := fm.Blocked(ctx, "p")
	must(t, err)
	if len(ms) != 1 || !ms[0].Until.Equal(clk.t.Add(3*time.Hour)) || ms[0].Reason != "3" {
		t.Errorf("marks %+v, want one until +3h", ms)
	}
}

func TestMarksCorruptFile(t *testing.T) {
	ctx := context.Background()
	fm := &FileMarks{Path: filepath.Join(t.TempDir(), "m.json")}
	os.WriteFile(fm.Path, []byte("{not json"), 0o600)
	if _, err := fm.Blocked(ctx, "p"); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("reading a corrupt file: %v", err)
	}
	must(t, fm.Block(ctx, Mark{Provider: "p", ID: "a", Until: time.Now().Add(time.Hour)}))
	if ms, err := fm.Blocked(ctx, "p"); err != nil || len(ms) != 1 {
		t.Errorf("after a write: %v, %v", ms, err)
	}
}

func TestMarkBlocks(t *testing.T) {
	fa := Fingerprint(keyA)
	tests := []struct {
		name string
		m    Mark
		c    Credential
		want bool
	}{
		{"same key", Mark{ID: "a", Key: fa}, Credential{ID: "a", Key: keyA}, true},
		{"same key other id", Mark{ID: "a", Key: fa}, Credential{ID: "env:OPENAI_API_KEY", Key: keyA}, true},
		{"new key same id", Mark{ID: "a", Key: fa}, Credential{ID: "a", Key: keyB}, false},
		{"id only", Mark{ID: "a"}, Credential{ID: "a", Key: keyB}, true},
		{"id only other id", Mark{ID: "a"}, Credential{ID: "b", Key: keyA}, false},
		{"no key", Mark{ID: "a", Key: fa}, Credential{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Blocks(tt.c); got != tt.want {
				t.Errorf("Blocks = %v", got)
			}
		})
	}
	if strings.Contains(fa, "AAAA") || len(fa) != 16 {
		t.Errorf("fingerprint %q", fa)
	}
}

func TestUntil(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		d    time.Duration
		want string
	}{
		{3*time.Hour + 12*time.Minute + 10*time.Second, "13:12 (in 3h12m)"},
		{42 * time.Second, "10:00 (in 42s)"},
		{20 * time.Hour, "Mar 3 06:00 (in 20h0m)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Until(now, now.Add(tt.d)); got != tt.want {
				t.Errorf("Until = %q", got)
			}
		})
	}
}

// TestMarksConcurrentProcesses starts several processes that all write
// marks at the same moment. The file must stay valid JSON and hold every
// mark: the lock serialises the read-modify-write, the rename keeps
// readers from seeing half a file.
func TestMarksConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth-marks.json")
	const workers = 8
	var cmds []*exec.Cmd
	var starts []io.Closer
	for i := range workers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AUTH_TEST_MARKER="+path, "AUTH_TEST_WORKER="+strconv.Itoa(i))
		in, err := cmd.StdinPipe()
		must(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		must(t, cmd.Start())
		cmds, starts = append(cmds, cmd), append(starts, in)
	}
	// Meanwhile this process keeps reading: it must never see a torn file.
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		fm := &FileMarks{Path: path}
		for {
			select {
			case <-stop:
				readErr <- nil
				return
			default:
			}
			if _, err := fm.Blocked(context.Background(), ""); err != nil {
				readErr <- err
				return
			}
		}
	}()
	for _, in := range starts {
		in.Close()
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("worker %d: %v: %s", i, err, cmd.Stderr)
		}
	}
	close(stop)
	if err := <-readErr; err != nil {
		t.Errorf("a reader saw a broken file: %v", err)
	}
	b, err := os.ReadFile(path)
	must(t, err)
	var f marksFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("marks file is not valid JSON: %v", err)
	}
	seen := map[string]bool{}
	for _, m := range f.Marks {
		seen[m.ID] = true
	}
	if len(seen) != workers*marksPerWorker || len(f.Marks) != len(seen) {
		t.Errorf("%d marks (%d distinct), want %d", len(f.Marks), len(seen), workers*marksPerWorker)
	}
}
