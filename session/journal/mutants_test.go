package journal

// Tests written for the mutants that lived in scripts/mutate.sh's first
// run on this package (issue 30): each names the bug it catches.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
)

// mFile writes a session file of the given lines and returns its path.
func mFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	mHeader   = `{"type":"session","version":3,"id":"s","timestamp":"2026-03-04T10:00:00.000Z","cwd":"/p"}`
	mHeaderV1 = `{"type":"session","id":"s","timestamp":"2026-03-04T10:00:00.000Z","cwd":"/p"}`
)

// mUser is a version 3 user message entry.
func mUser(id, parent, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}`
}

// TestLoadCompactionEdges: the context around a compaction at the edges
// of the chain, and version 1's firstKeptEntryIndex at the edges of the
// entries before it.
func TestLoadCompactionEdges(t *testing.T) {
	sum := SummaryText("S")
	v1 := func(text string) string {
		return `{"type":"message","timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}`
	}
	v1Comp := func(index string) string {
		return `{"type":"compaction","timestamp":"2026-03-04T10:00:02.000Z","summary":"S","firstKeptEntryIndex":` + index + `}`
	}
	cases := []struct {
		name  string
		lines []string
		want  []string
		warn  string // prefix of the one warning, "" for none
	}{
		{
			// bug: the first entry's compaction (comp == 0) read as no compaction
			name: "compaction first on the chain",
			lines: []string{mHeader,
				`{"type":"compaction","id":"c1","parentId":null,"timestamp":"2026-03-04T10:00:01.000Z","summary":"S","firstKeptEntryId":""}`,
				mUser("u1", "c1", "after")},
			want: []string{sum, "after"},
		},
		{
			// bug: the warning said for an empty firstKeptEntryId instead of a missing one
			name: "compaction keeps an entry not before it",
			lines: []string{mHeader, mUser("u1", "", "before"),
				`{"type":"compaction","id":"c1","parentId":"u1","timestamp":"2026-03-04T10:00:01.000Z","summary":"S","firstKeptEntryId":"gone"}`,
				mUser("u2", "c1", "after")},
			want: []string{sum, "after"},
			warn: `line 3: compaction keeps from entry "gone"`,
		},
		{
			// bug: index 1 (the first entry, the header being 0) not resolved
			name:  "v1 keeps from the first entry",
			lines: []string{mHeaderV1, v1("u1"), v1("u2"), v1Comp("1"), v1("u3")},
			want:  []string{sum, "u1", "u2", "u3"},
		},
		{
			// bug: an index just past the entries read (the compaction itself) panics
			name:  "v1 keeps from the compaction itself",
			lines: []string{mHeaderV1, v1("u1"), v1("u2"), v1Comp("3"), v1("u3")},
			want:  []string{sum, "u3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ld, err := Load(mFile(t, tc.lines...))
			if err != nil {
				t.Fatal(err)
			}
			if got := jTexts(ld.Messages); !cmp.Equal(got, tc.want) {
				t.Errorf("messages %q, want %q", got, tc.want)
			}
			jCheckWarn(t, "load", ld.Warnings, tc.warn)
		})
	}
}

// TestLoadEntriesPointIntoMessages: a context that is not the file's
// messages as they are (a custom_message joins them) is built in one array
// that never moves, so every entry sent as decoded points at its message
// of Loaded.Messages. Bug: Messages sized one short, so the last push
// moves it and the first entries point at a stale copy.
func TestLoadEntriesPointIntoMessages(t *testing.T) {
	p := mFile(t, mHeader, mUser("u1", "", "one"),
		`{"type":"custom_message","id":"c1","parentId":"u1","timestamp":"2026-03-04T10:00:02.000Z","customType":"x","content":"two","display":true}`)
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := jTexts(ld.Messages); !cmp.Equal(got, []string{"one", "two"}) {
		t.Fatalf("messages %q", got)
	}
	if ld.Entries[0].Message != &ld.Messages[0] {
		t.Error("the user entry's message is not the context's")
	}
}

// TestEntryDetails: an entry whose only detail is one field still has it
// in Details (bug: each clause of the test that keeps details negated).
func TestEntryDetails(t *testing.T) {
	head := `{"id":"e1","parentId":null,"timestamp":"2026-03-04T10:00:01.000Z",`
	cases := []struct {
		name, body string
		want       Details
	}{
		{"branch summary", `"type":"branch_summary","fromId":"x","summary":"S"}`, Details{Summary: "S"}},
		{"tokens only", `"type":"compaction","summary":"","firstKeptEntryId":"","tokensBefore":7}`, Details{TokensBefore: 7}},
		{"provider only", `"type":"model_change","provider":"sim"}`, Details{Provider: "sim"}},
		{"model only", `"type":"model_change","modelId":"m1"}`, Details{ModelID: "m1"}},
		{"pi message", `"type":"message","message":{"role":"bashExecution","command":"ls","output":"","timestamp":1}}`,
			Details{PiMessage: json.RawMessage(`{"role":"bashExecution","command":"ls","output":"","timestamp":1}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ld, err := Load(mFile(t, mHeader, head+tc.body))
			if err != nil || len(ld.Entries) != 1 {
				t.Fatalf("load: %v, %d entries", err, len(ld.Entries))
			}
			if got := ld.Entries[0].Details(); !cmp.Equal(got, tc.want) {
				t.Errorf("details %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRelativePaths: a path or cwd given relative is stored absolute, so
// a session opened from another directory later still names the right
// ones (bugs: each filepath.Abs's result dropped).
func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	j, err := CreateAt(filepath.Join("rel", "s.jsonl"), ".")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(abs, "rel", "s.jsonl")
	if j.Path() != want {
		t.Errorf("CreateAt path %q, want %q", j.Path(), want)
	}
	leaf, err := j.AppendMessage(jUser("u1", 1), false)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, ld, err := Open(filepath.Join("rel", "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if j.Path() != want || ld.Cwd != abs {
		t.Errorf("Open: path %q, cwd %q; want %q, %q", j.Path(), ld.Cwd, want, abs)
	}
	out, err := Branch(filepath.Join("rel", "s.jsonl"), leaf, "/p")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var h journalHeader
	if err := json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &h); err != nil || h.ParentSession != want {
		t.Errorf("branch header names parent %q (%v), want %q", h.ParentSession, err, want)
	}
}

// TestReadEntriesLeavesOutHeader: the header is not an entry, though it
// has an id (bug: line 1 read as an entry, so an empty session's leaf is
// its session id).
func TestReadEntriesLeavesOutHeader(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"header only", []string{mHeader}, nil},
		{"one entry", []string{mHeader, mUser("u1", "", "x")}, []string{"u1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := ReadEntries(mFile(t, tc.lines...))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.ID)
			}
			if !cmp.Equal(got, tc.want) || Leaf(es) != strings.Join(tc.want, "") {
				t.Errorf("entries %q, leaf %q; want %q", got, Leaf(es), tc.want)
			}
		})
	}
}

// TestSessionNames: which names Latest and List take for sessions. Bugs:
// a name with an empty id taken, a '9' in its time refused.
func TestSessionNames(t *testing.T) {
	dir := t.TempDir()
	names := []string{
		"2029-09-19T19-59-59-999Z_0f0f.jsonl", // a session, every digit a 9 but the id's
		"2030-01-01T00-00-00-000Z_.jsonl",     // no id: not a session, though newest by name
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(mHeader+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(dir, names[0])
	if got, err := Latest(dir); err != nil || got != want {
		t.Errorf("Latest %q, %v; want %q", got, err, want)
	}
	if got, err := List(dir); err != nil || !cmp.Equal(got, []string{want}) {
		t.Errorf("List %q, %v; want %q", got, err, want)
	}
}

// TestOpenTornTailEdges: Open cuts a torn last line at the end of the line
// before it, wherever that falls. Bugs: a file of one unterminated header
// loops for ever looking for a "\n"; a "\n" at the first byte of the
// 64 KiB read window is missed, and whole entries before it are cut.
func TestOpenTornTailEdges(t *testing.T) {
	entry := mUser("u1", "", "kept")
	prefix := `{"type":"message","id":"dead","message":{"role":"user","content":"`
	cases := []struct {
		name, file string
		want       string // the file after Open
		texts      []string
	}{
		{"header without its newline", mHeader, mHeader, nil},
		{"newline at the window's first byte",
			mHeader + "\n" + entry + "\n" + prefix + strings.Repeat("x", 64<<10-1-len(prefix)),
			mHeader + "\n" + entry + "\n", []string{"kept"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			j, ld, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			j.Close()
			if got := jTexts(ld.Messages); !cmp.Equal(got, tc.texts) {
				t.Errorf("messages %q, want %q", got, tc.texts)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.want {
				t.Errorf("after Open the file has %d bytes, want %d", len(b), len(tc.want))
			}
		})
	}
}

// TestAppendEmptyBody: an entry with no fields of its own is still one
// JSON object (bug: "{}" taken for a body with fields, leaving ",}").
func TestAppendEmptyBody(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.append("label", struct{}{}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	ld, err := Load(j.Path())
	if err != nil || len(ld.Entries) != 1 || len(ld.Warnings) != 0 {
		t.Fatalf("load: %v, %d entries, warnings %q", err, len(ld.Entries), ld.Warnings)
	}
}

// TestFullDiskNothingWritten: a write that stored nothing leaves nothing
// to take back, so even a truncate that would fail is not needed and the
// next line starts clean (bug: the failed truncate marks the file torn
// and the next entry starts with a blank line).
func TestFullDiskNothingWritten(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	d := &fullDisk{File: j.f.(*os.File), full: true, room: 0, truncateFail: true}
	j.f = d
	if _, err := j.AppendMessage(jUser("lost", 1), false); err == nil {
		t.Fatal("append on a full disk succeeded")
	}
	d.full = false
	if _, err := j.AppendMessage(jUser("u1", 2), false); err != nil {
		t.Fatal(err)
	}
	j.Close()
	b, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "\n\n") {
		t.Errorf("file has a blank line:\n%s", b)
	}
}

// TestCustomMessageWithoutContent: a custom_message with no content is an
// empty user message of the context, not a decoding error (bug: the
// missing content decoded as `{"content":}`).
func TestCustomMessageWithoutContent(t *testing.T) {
	ld, err := Load(mFile(t, mHeader,
		`{"type":"custom_message","id":"c1","parentId":null,"timestamp":"2026-03-04T10:00:02.000Z","customType":"x","display":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Messages) != 1 || ld.Messages[0].Role != llm.User || len(ld.Warnings) != 0 {
		t.Errorf("messages %+v, warnings %q; want one empty user message", ld.Messages, ld.Warnings)
	}
}

// TestEstimatedDelayAnchor: an estimated wait reads an absolute reset in
// the stored error against the message's own time, and guesses no anchor
// for a message without one. Bugs: a real timestamp dropped (the stated
// reset ignored), a timestamp of 0 taken for 1970 (a clock time ten hours
// away, so no retry at all).
func TestEstimatedDelayAnchor(t *testing.T) {
	cases := []struct {
		name, body string
		ts         int64
		want       int64 // DelayMs
	}{
		{"stated reset honoured", "429 Too Many Requests: rate limited; resets at 2026-03-04T10:00:30Z", 1772618400000, 30000},
		{"no timestamp, no anchor", "429 Too Many Requests: rate limited; try again at 10:00 UTC", 0, 2000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ld, err := Load(mFile(t, mHeader, mUser("u1", "", "go"),
				`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-04T10:00:00.000Z","retried":true,"message":{"role":"assistant","provider":"anthropic","content":[],"stopReason":"error","errorMessage":"`+tc.body+`","timestamp":`+strconv.FormatInt(tc.ts, 10)+`}}`))
			if err != nil {
				t.Fatal(err)
			}
			ld.EstimateDecisions()
			d := ld.Entries[1].Decision()
			if d == nil || d.DelayMs != tc.want {
				t.Errorf("decision %+v, want a wait of %d ms", d, tc.want)
			}
		})
	}
}

// TestLoadedIDs: IDs names each message's entry, for a file whose context
// is its messages as they are (bug: the direct path's IDs left empty).
func TestLoadedIDs(t *testing.T) {
	ld, err := Load(mFile(t, mHeader, mUser("u1", "", "one"),
		`{"type":"model_change","id":"m1","parentId":"u1","timestamp":"2026-03-04T10:00:02.000Z","provider":"sim","modelId":"sim-1"}`,
		mUser("u2", "m1", "two")))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(ld.IDs, []string{"u1", "u2"}) || ld.LastModel != "sim-1" {
		t.Errorf("IDs %q, last model %q; want [u1 u2], sim-1", ld.IDs, ld.LastModel)
	}
}

// TestScanAbort: a scan whose context ends reads no entry after it, at its
// first entry or in the middle of the file. Bugs: the context checked at
// every entry but the first, or only at the first.
func TestScanAbort(t *testing.T) {
	lines := []string{mHeader}
	for i := range 1000 {
		lines = append(lines, mUser("m"+strconv.Itoa(i), "", "p"))
	}
	p := mFile(t, lines...)
	for _, tc := range []struct {
		name   string
		cancel int // entries read before the context ends
	}{
		{"before the first entry", 0},
		{"after the first entry", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel == 0 {
				cancel()
			}
			n := 0
			_, err := Scan(ctx, p, Pos{}, func(*Entry, Pos) bool {
				if n++; n == tc.cancel {
					cancel()
				}
				return true
			})
			// The context is looked at every 256 entries: a scan stops
			// within a page of entries, not at once.
			if !errors.Is(err, context.Canceled) || n > tc.cancel+256 || tc.cancel == 0 && n != 0 {
				t.Errorf("%d entries read, %v; want context.Canceled after at most %d", n, err, tc.cancel+256)
			}
		})
	}
}

// TestInterruptedWaitLongFile: in a file longer than the tail read, a
// wait followed by a line that is not JSON (torn by a crash, or whole but
// corrupt, as a full disk leaves it) is still found. Bug: the tail
// buffer sized past the file's end, so its zero bytes are one more line
// and the one line passed over is theirs, not the corrupt one.
func TestInterruptedWaitLongFile(t *testing.T) {
	until := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ name, after string }{
		{"torn line after it", `{"type":"message","id":"ab`},
		{"corrupt line after it", `{"type":"message","id":"ab` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Create(t.TempDir(), "/p")
			if err != nil {
				t.Fatal(err)
			}
			j.AppendMessage(jUser(strings.Repeat("x", tailBytes), 1), false)
			if err := j.AppendWait(Wait{Attempt: 1, MaxAttempts: 3, Until: until}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			f, err := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.after)
			f.Close()
			w, err := InterruptedWait(j.Path())
			if err != nil || w == nil || !w.Until.Equal(until) {
				t.Errorf("InterruptedWait: %+v, %v; want the wait until %v", w, err, until)
			}
		})
	}
}

// TestLoadManyPiMessages: a file of many messages in pi's own roles (each
// one left to encoding/json after the fast path took a slot for it) loads
// whole. Bug: the slot given back one too far, past the slab's end.
func TestLoadManyPiMessages(t *testing.T) {
	lines := []string{mHeader}
	parent := "null"
	// An odd count: the bug's two slots a line then reach the slab's last
	// one (sized to the file's lines) on a line it gives back.
	for i := range 21 {
		id := "b" + strconv.Itoa(i)
		lines = append(lines, `{"type":"message","id":"`+id+`","parentId":`+parent+`,"timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"timestamp":1}}`)
		parent = `"` + id + `"`
	}
	ld, err := Load(mFile(t, lines...))
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Messages) != 21 || len(ld.Warnings) != 0 {
		t.Errorf("%d messages, warnings %q; want 21, none", len(ld.Messages), ld.Warnings)
	}
}

// TestScanPiMessage: Scan reads a message in pi's own roles as Load does.
// Bug: the slot given back checked with its test inverted, which reads
// before the start of Scan's empty slab and panics.
func TestScanPiMessage(t *testing.T) {
	p := mFile(t, mHeader, `{"type":"message","id":"b1","parentId":null,"timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"timestamp":1}}`)
	var roles []llm.Role
	if _, err := Scan(context.Background(), p, Pos{}, func(e *Entry, _ Pos) bool {
		roles = append(roles, e.Message.Role)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(roles, []llm.Role{"bashExecution"}) {
		t.Errorf("roles %q, want [bashExecution]", roles)
	}
}
