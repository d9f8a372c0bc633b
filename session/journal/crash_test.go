package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// jCrashEnv makes the test binary, re-run by TestJournalCrash, the child
// that appends until it is killed; its value is the session directory.
const jCrashEnv = "RALLY_JOURNAL_CRASH_CHILD_DIR"

// jCrashChild appends messages forever, a large one every other time so a
// kill can land inside a write, and prints each entry id once its write
// has returned.
func jCrashChild(dir string) {
	j, err := Create(dir, "/crash")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	big := strings.Repeat("x", 256<<10)
	for i := 0; ; i++ {
		text := fmt.Sprint("m", i)
		if i%2 == 1 {
			text += big
		}
		id, err := j.AppendMessage(jUser(text, int64(i)), false)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintln(os.Stdout, id)
	}
}

// TestJournalCrash kills a process that is appending with SIGKILL and
// checks that every line it finished writing loads, and that appending
// after the crash works.
func TestJournalCrash(t *testing.T) {
	if dir := os.Getenv(jCrashEnv); dir != "" {
		jCrashChild(dir)
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	for run := range 3 {
		sub := filepath.Join(dir, fmt.Sprint(run))
		cmd := exec.Command(os.Args[0], "-test.run=^TestJournalCrash$", "-test.count=1")
		cmd.Env = append(os.Environ(), jCrashEnv+"="+sub)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		var acked []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			acked = append(acked, sc.Text())
			if len(acked) == 12+run*5 {
				// SIGKILL on Unix: no chance to clean up. The delay moves
				// the kill around the next marshal-and-write.
				time.AfterFunc(time.Duration(run)*3*time.Millisecond, func() { cmd.Process.Kill() })
			}
		}
		stop.Stop()
		werr := cmd.Wait()
		if len(acked) < 12 {
			t.Fatalf("child stopped after %d appends: %v\n%s", len(acked), werr, stderr.Bytes())
		}
		path, err := Latest(sub)
		if err != nil {
			t.Fatal(err)
		}
		j, ld, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		// Every acknowledged entry is there, in order; at most one more
		// whole line (written, not yet acknowledged) and one torn line, which
		// Open drops: after the next append the file loads without warnings.
		n := len(ld.Entries)
		if n < len(acked) || n > len(acked)+1 {
			t.Fatalf("run %d: %d entries, %d acknowledged", run, n, len(acked))
		}
		for i, id := range acked {
			if ld.Entries[i].ID != id || ld.Messages[i].TextOf()[:len(fmt.Sprint("m", i))] != fmt.Sprint("m", i) {
				t.Fatalf("run %d: entry %d is %s, want %s", run, i, ld.Entries[i].ID, id)
			}
		}
		if len(ld.Warnings) > 1 || len(ld.Warnings) == 1 && !strings.Contains(ld.Warnings[0], "torn last line") {
			t.Errorf("run %d: warnings %q", run, ld.Warnings)
		}
		t.Logf("run %d: %d acknowledged, %d entries, warnings %q", run, len(acked), n, ld.Warnings)
		id, err := j.AppendMessage(jUser("after", 1), false)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		ld2, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		last := ld2.Entries[len(ld2.Entries)-1]
		if len(ld2.Entries) != n+1 || last.ID != id || last.ParentID != ld.Entries[n-1].ID ||
			ld2.Messages[len(ld2.Messages)-1].TextOf() != "after" || len(ld2.Warnings) != 0 {
			t.Errorf("run %d: after append: %d entries, last %+v, warnings %q", run, len(ld2.Entries), last.ID, ld2.Warnings)
		}
	}
}

// TestJournalConcurrent appends from many goroutines: every entry lands on
// a line of its own and the chain follows the file order.
func TestJournalConcurrent(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 50
	var mu sync.Mutex
	got := map[string]bool{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				id, err := j.AppendMessage(jAssistant(fmt.Sprint(w, "/", i), int64(i)), i%5 == 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[id] = true
				mu.Unlock()
				if i%10 == 0 {
					j.AppendModelChange("p", fmt.Sprint(w))
				}
			}
		})
	}
	wg.Wait()
	j.Close()
	ld, err := Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Warnings) != 0 || len(got) != workers*each || len(ld.Entries) != workers*each+workers*each/10 {
		t.Fatalf("%d ids, %d entries, warnings %q", len(got), len(ld.Entries), ld.Warnings)
	}
	msgs := 0
	for i, e := range ld.Entries {
		if i > 0 && e.ParentID != ld.Entries[i-1].ID || i == 0 && e.ParentID != "" {
			t.Fatalf("entry %d: parent %q, previous %q", i, e.ParentID, ld.Entries[i-1].ID)
		}
		if e.Type == "message" {
			msgs++
			if !got[e.ID] {
				t.Errorf("entry %s was not returned by an append", e.ID)
			}
		}
	}
	if want := workers*each - workers*each/5; len(ld.Messages) != want || msgs != workers*each {
		t.Errorf("%d messages in context, want %d", len(ld.Messages), want)
	}
}

func TestLatest(t *testing.T) {
	cases := []struct {
		name  string
		files []string // a trailing "/" makes a directory
		want  string   // "" for fs.ErrNotExist
	}{
		{"empty", nil, ""},
		{"one", []string{"2025-01-05T10-00-00-000Z_a.jsonl"}, "2025-01-05T10-00-00-000Z_a.jsonl"},
		{"newest by time", []string{
			"2025-01-05T10-00-00-000Z_z.jsonl", "2026-01-01T00-00-00-001Z_a.jsonl",
			"2026-01-01T00-00-00-000Z_b.jsonl", "2024-12-31T23-59-59-999Z_c.jsonl",
		}, "2026-01-01T00-00-00-001Z_a.jsonl"},
		{"others ignored", []string{
			"2025-01-05T10-00-00-000Z_a.jsonl", "zzz.jsonl", "notes.txt",
			"2030-01-01T00-00-00-000Z_d.jsonl/", "2030-01-01T00-00-00-000Z_x.json",
			"2030-01-01T00:00:00.000Z_x.jsonl", "2030-01-01T00-00-00-000Z.jsonl",
		}, "2025-01-05T10-00-00-000Z_a.jsonl"},
		{"only others", []string{"a.jsonl", "b/"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if d, ok := strings.CutSuffix(f, "/"); ok {
					os.Mkdir(filepath.Join(dir, d), 0o700)
				} else {
					os.WriteFile(filepath.Join(dir, f), nil, 0o600)
				}
			}
			got, err := Latest(dir)
			if tc.want == "" {
				if !errors.Is(err, fs.ErrNotExist) || got != "" {
					t.Errorf("got %q, %v; want fs.ErrNotExist", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Latest(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
	// Journals made one after another come back newest first.
	dir := t.TempDir()
	var last string
	for range 3 {
		j, err := Create(dir, "/p")
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		last = j.Path()
		// File names carry the creation time to the millisecond: wait for
		// the clock to pass it, so the next journal is strictly newer.
		for t := time.Now().UnixMilli(); time.Now().UnixMilli() == t; {
		}
	}
	if got, err := Latest(dir); err != nil || got != last {
		t.Errorf("Latest = %q, %v; want %q", got, err, last)
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	j, err := Create(b.TempDir(), "/p")
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	m := jAssistant(strings.Repeat("Some answer text of a typical length. ", 30), 1700000000000)
	m.Content = append(m.Content, llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "read", Arguments: []byte(`{"path":"main.go"}`)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.AppendMessage(m, false); err != nil {
			b.Fatal(err)
		}
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	names := []string{"2026-01-02T00-00-00-000Z_b.jsonl", "2026-01-01T00-00-00-000Z_a.jsonl", "2026-01-03T00-00-00-000Z_c.jsonl", "notes.txt", "2026-01-04_bad.jsonl"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, names[2]), filepath.Join(dir, names[0]), filepath.Join(dir, names[1])}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("List = %v, want %v", got, want)
	}
	if latest, err := Latest(dir); err != nil || latest != want[0] {
		t.Errorf("Latest = %q %v, want List's first", latest, err)
	}
	if got, err := List(filepath.Join(dir, "none")); err != nil || len(got) != 0 {
		t.Errorf("List of a missing dir = %v %v", got, err)
	}
}
