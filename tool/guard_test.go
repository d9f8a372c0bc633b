//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

func TestDeny(t *testing.T) {
	home := t.TempDir()
	secret := writeFile(t, home, "auth.json", `{"providers":{"x":[{"id":"a","key":"sk-secret"}]}}`)
	dir := t.TempDir()
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(home, "hard.json")
	if err := os.Link(secret, hard); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "RALLY_HOME=" + home}
	tools := New(dir, Options{Deny: []string{secret}, Env: env})
	byName := map[string]Tool{}
	for _, tl := range tools {
		byName[tl.Spec().Name] = tl
	}
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": secret}},
		{"read", map[string]any{"path": link}},
		{"read", map[string]any{"path": hard}},
		{"write", map[string]any{"path": secret, "content": "{}"}},
		{"edit", map[string]any{"path": secret, "oldText": "sk", "newText": "x"}},
		{"bash", map[string]any{"command": "cat " + secret}},
		{"bash", map[string]any{"command": "cat $RALLY_HOME/auth.json"}},
		{"bash", map[string]any{"command": "grep key ${RALLY_HOME}/auth.json"}},
		{"bash", map[string]any{"command": "cd " + dir + " && cat " + mustRel(t, dir, secret)}},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+fmt.Sprint(c.args), func(t *testing.T) {
			res, err := call(t, byName[c.tool], c.args)
			if err == nil {
				t.Fatalf("not refused: %q", textOf(res))
			}
			if !strings.Contains(err.Error(), secret+" is off limits to tools") {
				t.Fatalf("error %q", err)
			}
		})
	}
	if b, _ := os.ReadFile(secret); !strings.Contains(string(b), "sk-secret") {
		t.Fatal("the denied file was changed")
	}
	// Other files, and other files of the same name, are not refused.
	other := writeFile(t, dir, "auth.json", "{}\n")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": other}},
		{"bash", map[string]any{"command": "cat auth.json"}},
	} {
		if res, err := call(t, byName[c.tool], c.args); err != nil || res.IsError {
			t.Errorf("%s %v: %q, %v", c.tool, c.args, textOf(res), err)
		}
	}
}

func mustRel(t *testing.T, dir, f string) string {
	rel, err := filepath.Rel(dir, f)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestRedacting(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "notes.txt", "my key is sk-secret-123456789\n")
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret-123456789", "[redacted]") }
	tools := New(dir, Options{Redact: redact})
	read, bash := tools[0], tools[3]
	res, err := call(t, read, map[string]any{"path": "notes.txt"})
	if err != nil || textOf(res) != "my key is [redacted]" {
		t.Fatalf("read: %q, %v", textOf(res), err)
	}
	res, err = call(t, bash, map[string]any{"command": "cat notes.txt; exit 3"})
	if err != nil || !res.IsError || !strings.HasPrefix(textOf(res), "my key is [redacted]\n") {
		t.Fatalf("bash: %q, %v", textOf(res), err)
	}
	// Errors are redacted too, and stay what they were for errors.Is.
	ctx, cancel := context.WithCancel(context.Background())
	ready := fifo(t)
	done := make(chan error, 1)
	go func() {
		_, err := bash.Run(ctx, json.RawMessage(`{"command":"cat notes.txt; echo > `+ready+`; sleep 10"}`))
		done <- err
	}()
	readLine(t, ready)
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "sk-secret") || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("abort error %v", err)
	}
}

func TestBashEnv(t *testing.T) {
	b := Bash{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "KEEP=yes"}}
	t.Setenv("DROPPED_API_KEY", "sk-in-the-parent")
	res, err := call(t, b, map[string]any{"command": "echo keep=$KEEP dropped=$DROPPED_API_KEY"})
	if err != nil || textOf(res) != "keep=yes dropped=\n" {
		t.Fatalf("%q, %v", textOf(res), err)
	}
}

func TestProcs(t *testing.T) {
	var procs Procs
	b := Bash{Dir: t.TempDir(), Procs: &procs}
	// A command that leaves a background process: its group is kept and
	// killed by Kill.
	res, err := call(t, b, map[string]any{"command": "sleep 30 >/dev/null 2>&1 & echo $!"})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(textOf(res)))
	if err != nil {
		t.Fatalf("output %q", textOf(res))
	}
	if !proctest.Alive(pid) || procs.Len() != 1 {
		t.Fatalf("alive %v, %d groups tracked", proctest.Alive(pid), procs.Len())
	}
	// A command whose group is empty when it ends is forgotten.
	if _, err := call(t, b, map[string]any{"command": "true"}); err != nil {
		t.Fatal(err)
	}
	if procs.Len() != 1 {
		t.Fatalf("%d groups tracked after a command that left nothing", procs.Len())
	}
	procs.Kill()
	proctest.Dead(t, pid)
	// After Kill nothing new runs.
	marker := filepath.Join(b.Dir, "ran")
	_, err = call(t, b, map[string]any{"command": "sleep 0.2; touch " + marker})
	if err == nil || !strings.Contains(err.Error(), "rally is shutting down") {
		t.Fatalf("after Kill: %v", err)
	}
	procs.Kill() // twice is fine
}

func TestProcsForgetsEndedGroups(t *testing.T) {
	var procs Procs
	b := Bash{Dir: t.TempDir(), Procs: &procs}
	ready := fifo(t)
	// The background process outlives the command briefly, then ends: the
	// group is watched and forgotten once empty.
	if _, err := call(t, b, map[string]any{"command": "(read x < " + ready + ") >/dev/null 2>&1 &"}); err != nil {
		t.Fatal(err)
	}
	if procs.Len() != 1 {
		t.Fatalf("%d groups tracked", procs.Len())
	}
	f, err := os.OpenFile(ready, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	proctest.Wait(t, "an ended group to be forgotten", func() bool { return procs.Len() == 0 })
	procs.Kill()
}
