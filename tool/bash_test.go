//go:build unix

package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
)

func TestBash(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		tool    Bash
		args    map[string]any
		want    string // the exact text, or with prefix "~" a part of it
		isError bool
	}{
		{"echo", Bash{}, map[string]any{"command": "echo hello"}, "hello\n", false},
		{"no output", Bash{}, map[string]any{"command": "true"}, "(no output)", false},
		{"stderr combined", Bash{}, map[string]any{"command": "echo out; echo err >&2; echo out2"}, "out\nerr\nout2\n", false},
		{"working directory", Bash{}, map[string]any{"command": "pwd -P"}, real + "\n", false},
		{"bash features", Bash{}, map[string]any{"command": "a=(x y z); echo ${#a[@]}"}, "3\n", false},
		{"no stdin", Bash{}, map[string]any{"command": "cat; echo done"}, "done\n", false},
		{"exit code", Bash{}, map[string]any{"command": "echo hi; exit 2"}, "hi\n\nexit code 2", true},
		{"exit code, no newline", Bash{}, map[string]any{"command": "printf hi; exit 3"}, "hi\n\nexit code 3", true},
		{"killed by signal", Bash{}, map[string]any{"command": "kill -9 $$"}, "(no output)\n\nkilled: signal killed", true},
		{"output tail", Bash{MaxOutput: 100}, map[string]any{"command": "seq 1 1000"},
			"~showing the last 24 lines (97 bytes), from line 977. The whole output is saved in ", false},
		{"output tail, lines", Bash{MaxLines: 10}, map[string]any{"command": "seq 1 1000"},
			"~(the part shown here starts at offset 991)]\n" + seqText(991, 1000), false},
		{"huge output", Bash{MaxOutput: 1000}, map[string]any{"command": "yes | head -c 3000000; echo; echo end"},
			"~y\ny\n\nend\n", false},
		{"timeout", Bash{Timeout: 50 * time.Millisecond}, map[string]any{"command": "echo started; sleep 10"},
			"started\n\n[timed out after 50ms; the command and its children were killed.", true},
		{"timeout argument", Bash{}, map[string]any{"command": "sleep 10", "timeout": 0.05},
			"~[timed out after 50ms;", true},
		{"huge timeout argument", Bash{}, map[string]any{"command": "echo ok", "timeout": 1e300}, "ok\n", false},
		{"timeout argument longer", Bash{Timeout: time.Millisecond}, map[string]any{"command": "echo ok", "timeout": 60},
			"ok\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.tool.Dir, c.tool.TempDir = dir, t.TempDir()
			res, err := call(t, c.tool, c.args)
			if err != nil {
				t.Fatal(err)
			}
			got := textOf(res)
			if part, ok := strings.CutPrefix(c.want, "~"); ok {
				if !strings.Contains(got, part) {
					t.Fatalf("got\n%q\nwant it to contain\n%q", got, part)
				}
			} else if got != c.want && !(strings.HasSuffix(c.want, ".") && strings.HasPrefix(got, c.want)) {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
			if res.IsError != c.isError {
				t.Fatalf("IsError %v, want %v", res.IsError, c.isError)
			}
		})
	}
}

// seqText is the output of seq from, to.
func seqText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func TestBashErrors(t *testing.T) {
	dir := t.TempDir()
	runErrCases(t, Bash{Dir: dir}, []errCase{
		{"missing command", map[string]any{}, `missing required argument "command"`},
		{"empty command", map[string]any{"command": " "}, `"command" is empty`},
		{"command not a string", map[string]any{"command": []string{"ls"}}, `"command" must be a string, not array`},
		{"timeout not a number", map[string]any{"command": "ls", "timeout": "10"}, `"timeout" must be a number, not string`},
		{"negative timeout", map[string]any{"command": "ls", "timeout": -1}, `"timeout" must be a positive number`},
		{"zero timeout", map[string]any{"command": "ls", "timeout": 0}, `"timeout" must be a positive number`},
		{"invalid json", `{"command":`, "arguments are not valid JSON"},
	})
	runErrCases(t, Bash{Dir: filepath.Join(dir, "nope")}, []errCase{
		{"missing dir", map[string]any{"command": "ls"}, "does not exist or is not a directory"},
	})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Bash{Dir: dir}.Run(ctx, json.RawMessage(`{"command":"echo no"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before start: %v", err)
	}
}

// fifo makes a named pipe that a command writes to, so a test learns
// that the command reached a point without polling or sleeping.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// readLine opens the fifo (blocking until the command opens it to write)
// and reads one line.
func readLine(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

type runResult struct {
	res Result
	err error
}

// start runs command in a goroutine and returns its cancel and result.
func start(b Bash, command string) (context.CancelFunc, <-chan runResult) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan runResult, 1)
	args, _ := json.Marshal(map[string]string{"command": command})
	go func() {
		res, err := b.Run(ctx, args)
		done <- runResult{res, err}
	}()
	return cancel, done
}

func TestBashAbortIsFast(t *testing.T) {
	ready := fifo(t)
	cancel, done := start(Bash{Dir: t.TempDir()}, "echo partial; echo ready > "+ready+"; sleep 10")
	defer cancel()
	readLine(t, ready)

	at := time.Now()
	cancel()
	select {
	case r := <-done:
		if took := time.Since(at); took > time.Second {
			t.Fatalf("abort took %v", took)
		}
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", r.err)
		}
		if !strings.HasPrefix(r.err.Error(), "bash: aborted") || !strings.Contains(r.err.Error(), "partial") {
			t.Fatalf("error %q lacks the notice or the output so far", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestBashKillsChildren(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			pids := fifo(t)
			b := Bash{Dir: t.TempDir()}
			if how == "timeout" {
				// Long enough to read the pid, short enough to fire.
				b.Timeout = 500 * time.Millisecond
			}
			cancel, done := start(b, "sleep 30 & echo $! > "+pids+"; wait")
			defer cancel()
			line := make(chan string, 1)
			go func() {
				// Not readLine: t.Fatal must not run off the test goroutine.
				f, err := os.Open(pids)
				if err != nil {
					line <- err.Error()
					return
				}
				defer f.Close()
				l, _ := bufio.NewReader(f).ReadString('\n')
				line <- strings.TrimSpace(l)
			}()
			var pid int
			select {
			case l := <-line:
				var err error
				if pid, err = strconv.Atoi(l); err != nil {
					t.Fatal(err)
				}
			case r := <-done:
				// Only a timeout can end the run first, on a very slow machine.
				t.Fatalf("run ended before the child started: %q, %v", textOf(r.res), r.err)
			}
			if !proctest.Alive(pid) {
				t.Fatalf("child %d is not running before the abort", pid)
			}
			if how == "cancel" {
				cancel()
			}
			r := <-done
			if how == "timeout" && (r.err != nil || !r.res.IsError || !strings.Contains(textOf(r.res), "timed out")) {
				t.Fatalf("timeout result %q, %v", textOf(r.res), r.err)
			}
			if how == "cancel" && !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancel error %v", r.err)
			}
			proctest.Dead(t, pid)
		})
	}
}

func TestBashBackgroundHoldsPipe(t *testing.T) {
	// The shell exits at once but its child keeps the output pipe open:
	// Run must still return, after the wait delay, with what was printed.
	res, err := call(t, Bash{Dir: t.TempDir()}, map[string]any{"command": "sleep 30 & echo $!"})
	if err != nil {
		t.Fatal(err)
	}
	got := textOf(res)
	pidText, _, _ := strings.Cut(got, "\n")
	if pid, err := strconv.Atoi(pidText); err == nil {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	if res.IsError || !strings.Contains(got, "a background process kept its output open") {
		t.Fatalf("got %q", got)
	}
}

func TestCapture(t *testing.T) {
	cases := []struct {
		name     string
		max      int
		maxLines int
		writes   []string
		want     string
		note     string // a part of the note; "" for none
	}{
		{"fits", 10, 10, []string{"abc", "def"}, "abcdef", ""},
		{"exact", 6, 10, []string{"abc", "def"}, "abcdef", ""},
		{"one big write", 4, 10, []string{"0123456789"}, "6789", "it was 10 bytes in 1 line; showing the last 1 line (4 bytes), from line 1."},
		{"many writes", 5, 10, []string{"ab", "cd", "ef", "gh", "ij", "kl"}, "hijkl", "12 bytes"},
		{"starts at a line", 8, 10, []string{"aaaa\nbbbb\ncc"}, "bbbb\ncc", "in 3 lines; showing the last 2 lines (7 bytes), from line 2."},
		{"starts at a character", 5, 10, []string{"xééé"}, "éé", "7 bytes"},
		{"line cap", 100, 3, []string{"1\n2\n", "3\n4\n5\n"}, "3\n4\n5\n", "in 5 lines; showing the last 3 lines (6 bytes), from line 3."},
		{"line cap, no final newline", 100, 2, []string{"1\n2\n3"}, "2\n3", "in 3 lines; showing the last 2 lines (3 bytes), from line 2."},
		{"exactly the line cap", 100, 3, []string{"1\n2\n3\n"}, "1\n2\n3\n", ""},
		{"both caps", 6, 2, []string{"aaaa\nb\nc\nd\n"}, "c\nd\n", "from line 3."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cp := &capture{max: c.max, maxLines: c.maxLines, dir: dir, spillMax: DefaultSpillBytes}
			var all string
			for _, w := range c.writes {
				if n, err := cp.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("write %d, %v", n, err)
				}
				all += w
			}
			cp.close()
			got, note := cp.text()
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			saved, _ := filepath.Glob(filepath.Join(dir, "rally-bash-*.out"))
			if c.note == "" {
				if note != "" || len(saved) != 0 {
					t.Fatalf("note %q, saved %v for output that fits", note, saved)
				}
				return
			}
			if !strings.Contains(note, c.note) {
				t.Fatalf("note %q lacks %q", note, c.note)
			}
			// The note names the file that holds the whole output.
			if len(saved) != 1 || !strings.Contains(note, saved[0]) {
				t.Fatalf("saved %v, note %q", saved, note)
			}
			if b, _ := os.ReadFile(saved[0]); string(b) != all {
				t.Fatalf("saved %q, want %q", b, all)
			}
		})
	}
	t.Run("saved file is bounded", func(t *testing.T) {
		cp := &capture{max: 4, maxLines: 10, dir: t.TempDir(), spillMax: 6}
		cp.Write([]byte("0123456789"))
		cp.close()
		_, note := cp.text()
		if !strings.Contains(note, "only its first 6 bytes were saved") {
			t.Fatalf("note %q", note)
		}
	})
	t.Run("no place to save", func(t *testing.T) {
		cp := &capture{max: 4, maxLines: 10, dir: filepath.Join(t.TempDir(), "missing"), spillMax: 100}
		cp.Write([]byte("0123456789"))
		cp.close()
		_, note := cp.text()
		if !strings.Contains(note, "The earlier part is lost: it could not be saved") {
			t.Fatalf("note %q", note)
		}
	})
}
