package journal

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
)

// Test messages with every content type of DESIGN §6.3.
func jUser(text string, ts int64) llm.Message {
	return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: ts}
}

func jAssistant(text string, ts int64) llm.Message {
	return llm.Message{
		Role: llm.Assistant, Content: []llm.Content{llm.Text(text)},
		API: "openai-completions", Provider: "sim", Model: "sim-1",
		Usage:      &llm.Usage{Input: 10, Output: 3, TotalTokens: 13, Cost: llm.Cost{Input: 0.001, Total: 0.001}},
		StopReason: llm.Stop, Timestamp: ts,
	}
}

func jRich() []llm.Message {
	return []llm.Message{
		{Role: llm.User, Timestamp: 1700000000001, Content: []llm.Content{
			llm.Text("look at this <b>&</b>\nline two \u2028 sep"),
			{Type: llm.ImageType, Data: "iVBORw0KGgo=", MimeType: "image/png"},
		}},
		{Role: llm.Assistant, Timestamp: 1700000000002, API: "anthropic-messages", Provider: "anthropic",
			Model: "claude-x", StopReason: llm.ToolUse,
			Usage: &llm.Usage{Input: 100, Output: 20, CacheRead: 5, CacheWrite: 7, TotalTokens: 132,
				Cost: llm.Cost{Input: 0.1, Output: 0.2, CacheRead: 0.01, CacheWrite: 0.02, Total: 0.33}},
			Content: []llm.Content{
				{Type: llm.ThinkingType, Thinking: "hmm", ThinkingSignature: "c2ln"},
				llm.Text("reading"),
				{Type: llm.ToolCallType, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go","n":1}`)},
			}},
		{Role: llm.ToolResult, Timestamp: 1700000000003, ToolCallID: "call_1", ToolName: "read", IsError: true,
			Content: []llm.Content{llm.Text("no such file"), {Type: llm.ImageType, Data: "AAAA", MimeType: "image/jpeg"}}},
	}
}

// jStep is one append of a round-trip case.
type jStep struct {
	label   string // names the entry for later steps and for want
	msg     *llm.Message
	retried bool
	model   [2]string
	name    string
	keep    string // compaction: label of the first kept entry
}

func jMsg(label string, m llm.Message, retried bool) jStep {
	return jStep{label: label, msg: &m, retried: retried}
}

func TestJournalRoundTrip(t *testing.T) {
	rich := jRich()
	failed := jAssistant("", 1700000000004)
	failed.StopReason, failed.ErrorMessage = llm.Error, "529 overloaded"
	cases := []struct {
		name  string
		steps []jStep
		want  []string // labels of Messages; "summary" is the compaction's
		wName string
		wProv string
	}{
		{
			name: "all content types",
			steps: []jStep{
				jMsg("u", rich[0], false), jMsg("a", rich[1], false), jMsg("t", rich[2], false),
				jMsg("e", llm.Message{Role: llm.Assistant, StopReason: llm.Aborted, Timestamp: 9}, false),
			},
			want: []string{"u", "a", "t", "e"},
		},
		{
			name: "model name and compaction",
			steps: []jStep{
				{model: [2]string{"sim", "sim-1"}},
				jMsg("u1", jUser("one", 1), false), jMsg("a1", jAssistant("r1", 2), false),
				jMsg("u2", jUser("two", 3), false), jMsg("a2", jAssistant("r2", 4), false),
				{name: "  My session "},
				{keep: "u2"},
				{model: [2]string{"anthropic", "claude-x"}},
				jMsg("u3", jUser("three", 5), false),
			},
			want:  []string{"summary", "u2", "a2", "u3"},
			wName: "My session", wProv: "anthropic/claude-x",
		},
		{
			name: "retried kept in entries only",
			steps: []jStep{
				jMsg("u1", jUser("one", 1), false), jMsg("f1", failed, true),
				jMsg("f2", failed, true), jMsg("a1", jAssistant("ok", 5), false),
			},
			want: []string{"u1", "a1"},
		},
		{
			name: "retried message is the first kept",
			steps: []jStep{
				jMsg("u1", jUser("one", 1), false), jMsg("f1", failed, true),
				jMsg("a1", jAssistant("ok", 5), false), {keep: "f1"}, jMsg("u2", jUser("two", 6), false),
			},
			want: []string{"summary", "a1", "u2"},
		},
		{name: "empty session", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			start := time.Now().Add(-time.Second)
			j, err := Create(dir, "/home/me/proj")
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]string{}
			msgs := map[string]llm.Message{}
			for _, s := range tc.steps {
				switch {
				case s.msg != nil:
					id, err := j.AppendMessage(*s.msg, s.retried)
					if err != nil {
						t.Fatal(err)
					}
					ids[s.label], msgs[s.label] = id, *s.msg
				case s.model[0] != "":
					err = j.AppendModelChange(s.model[0], s.model[1])
				case s.name != "":
					err = j.SetName(s.name)
				case s.keep != "":
					err = j.AppendCompaction("the summary", ids[s.keep], 1234, time.Now())
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j2, ld, err := Open(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			end := time.Now().Add(time.Second)
			if ld.ID != j.ID() || j2.ID() != j.ID() || ld.Cwd != "/home/me/proj" || ld.Name != tc.wName {
				t.Errorf("header: id %q/%q want %q, cwd %q, name %q want %q", ld.ID, j2.ID(), j.ID(), ld.Cwd, ld.Name, tc.wName)
			}
			if got := strings.Trim(ld.LastProvider+"/"+ld.LastModel, "/"); got != tc.wProv {
				t.Errorf("last model %q, want %q", got, tc.wProv)
			}
			if len(ld.Warnings) != 0 {
				t.Errorf("warnings: %q", ld.Warnings)
			}
			if len(ld.Entries) != len(tc.steps) {
				t.Fatalf("%d entries, want %d", len(ld.Entries), len(tc.steps))
			}
			for i, e := range ld.Entries {
				s := tc.steps[i]
				parent := ""
				if i > 0 {
					parent = ld.Entries[i-1].ID
				}
				if e.ParentID != parent || e.Line != i+2 || e.Timestamp.Before(start) || e.Timestamp.After(end) {
					t.Errorf("entry %d: parent %q want %q, line %d, time %v", i, e.ParentID, parent, e.Line, e.Timestamp)
				}
				if s.msg == nil {
					continue
				}
				if e.Type != "message" || e.ID != ids[s.label] || e.Retried != s.retried {
					t.Errorf("entry %d: %s %s retried=%v, want message %s retried=%v", i, e.Type, e.ID, e.Retried, ids[s.label], s.retried)
				}
				if d := cmp.Diff(s.msg, e.Message); d != "" {
					t.Errorf("entry %d message (-want +got):\n%s", i, d)
				}
			}
			var want []llm.Message
			for _, l := range tc.want {
				if l == "summary" {
					var ts int64
					for _, e := range ld.Entries {
						if e.Type == "compaction" {
							ts = e.Timestamp.UnixMilli()
						}
					}
					want = append(want, jUser(compactionPrefix+"the summary"+compactionSuffix, ts))
					continue
				}
				want = append(want, msgs[l])
			}
			if d := cmp.Diff(want, ld.Messages); d != "" {
				t.Errorf("Messages (-want +got):\n%s", d)
			}
		})
	}
}

// TestJournalWireShape checks the bytes pi's tools read.
func TestJournalWireShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	j, err := Create(dir, "/w")
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := j.AppendMessage(jUser("hi", 7), false)
	// The compaction's time is the caller's, written in UTC to the millisecond.
	at := time.Date(2026, 12, 1, 13, 45, 6, 789_654_000, time.FixedZone("CET", 3600))
	if err := j.AppendCompaction("s", id1, 99, at); err != nil {
		t.Fatal(err)
	}
	m := jAssistant("x", 8)
	id3, _ := j.AppendMessage(m, true)
	j.Close()

	name := filepath.Base(j.Path())
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jsonl$`).MatchString(name) {
		t.Errorf("file name %q", name)
	}
	if !strings.HasSuffix(name, "_"+j.ID()+".jsonl") {
		t.Errorf("file name %q lacks id %s", name, j.ID())
	}
	for p, want := range map[string]fs.FileMode{dir: 0o700, j.Path(): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}
	b, _ := os.ReadFile(j.Path())
	lines := strings.Split(string(b), "\n")
	if len(lines) != 5 || lines[4] != "" {
		t.Fatalf("want 4 lines ending in newline, got %q", b)
	}
	iso := `"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"`
	ts := regexp.MustCompile(iso).FindString(lines[0])
	wants := []string{
		`^\{"type":"session","version":3,"id":"` + j.ID() + `","timestamp":` + iso + `,"cwd":"/w"\}$`,
		`^\{"type":"message","id":"` + id1 + `","parentId":null,"timestamp":` + iso + `,"message":\{"role":"user","content":\[\{"type":"text","text":"hi"\}\],"timestamp":7\}\}$`,
		`^\{"type":"compaction","id":"[0-9a-f]{8}","parentId":"` + id1 + `","timestamp":"2026-12-01T12:45:06.789Z","summary":"s","firstKeptEntryId":"` + id1 + `","tokensBefore":99\}$`,
		`^\{"type":"message","id":"` + id3 + `","parentId":"[0-9a-f]{8}","timestamp":` + iso + `,"message":\{.*"stopReason":"stop","timestamp":8\},"retried":true\}$`,
	}
	for i, w := range wants {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], w)
		}
	}
	// The file name's time is the header's, with ':' and '.' replaced.
	if want := strings.NewReplacer(":", "-", ".", "-").Replace(strings.Trim(ts, `"`)); !strings.HasPrefix(name, want+"_") {
		t.Errorf("file name %q does not start with header time %s", name, want)
	}
}

// TestJournalDamaged builds a session of four messages, changes its bytes, and
// checks what loading and a later append make of it.
func TestJournalDamaged(t *testing.T) {
	cases := []struct {
		name   string
		damage func(lines []string) string // lines: header, u1, a1, u2, a2
		warn   string
		want   []string // texts of Messages after loading
		after  []string // warnings after one more append and a reload (prefixes)
	}{
		{
			name:   "torn last line",
			damage: func(l []string) string { return strings.Join(l, "\n") + "\n" + `{"type":"message","id":"dead` },
			warn:   "line 6: torn last line skipped",
			want:   []string{"u1", "a1", "u2", "a2"},
			after:  nil, // Open dropped the torn bytes: the next entry starts clean
		},
		{
			name:   "torn last line of a message",
			damage: func(l []string) string { return strings.Join(l[:4], "\n") + "\n" + l[4][:len(l[4])/2] },
			warn:   "line 5: torn last line skipped",
			want:   []string{"u1", "a1", "u2"},
			after:  nil,
		},
		{
			name:   "last line complete but unterminated",
			damage: func(l []string) string { return strings.Join(l, "\n") },
			want:   []string{"u1", "a1", "u2", "a2"},
		},
		{
			name: "corrupt middle line",
			damage: func(l []string) string {
				l[2] = `{"type":"message",` + "\x00garbage"
				return strings.Join(l, "\n") + "\n"
			},
			warn:  "line 3: corrupt entry skipped",
			want:  []string{"u1", "u2", "a2"},
			after: []string{"line 3: corrupt entry skipped"},
		},
		{
			name: "field of the wrong type",
			damage: func(l []string) string {
				l[2] = strings.TrimSuffix(l[2], "}") + `,"retried":"yes"}`
				return strings.Join(l, "\n") + "\n"
			},
			warn:  "line 3: json: cannot unmarshal string",
			want:  []string{"u1", "a1", "u2", "a2"},
			after: []string{"line 3: json: cannot unmarshal string"},
		},
		{
			name: "unknown entry type and blank lines",
			damage: func(l []string) string {
				var a1 struct{ ID string }
				json.Unmarshal([]byte(l[2]), &a1)
				x := `{"type":"bookmark","id":"beefbeef","parentId":"` + a1.ID + `","timestamp":"2025-01-01T00:00:00.000Z"}`
				u2 := strings.Replace(l[3], `"parentId":"`+a1.ID, `"parentId":"beefbeef`, 1)
				return strings.Join([]string{l[0], l[1], l[2], "", x, "  ", u2, l[4]}, "\n") + "\n"
			},
			warn:  `line 5: unknown entry type "bookmark"`,
			want:  []string{"u1", "a1", "u2", "a2"},
			after: []string{`line 5: unknown entry type "bookmark"`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Create(t.TempDir(), "/p")
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range []string{"u1", "a1", "u2", "a2"} {
				m := jUser(s, int64(i))
				if s[0] == 'a' {
					m = jAssistant(s, int64(i))
				}
				if _, err := j.AppendMessage(m, false); err != nil {
					t.Fatal(err)
				}
			}
			j.Close()
			b, _ := os.ReadFile(j.Path())
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if err := os.WriteFile(j.Path(), []byte(tc.damage(lines)), 0o600); err != nil {
				t.Fatal(err)
			}
			j2, ld, err := Open(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			jCheckWarn(t, "open", ld.Warnings, tc.warn)
			if got := jTexts(ld.Messages); !cmp.Equal(got, tc.want) {
				t.Errorf("messages %q, want %q", got, tc.want)
			}
			if _, err := j2.AppendMessage(jUser("u3", 9), false); err != nil {
				t.Fatal(err)
			}
			j2.Close()
			ld, err = Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.after, jPrefixes(ld.Warnings, tc.after)); d != "" {
				t.Errorf("warnings after append %q (-want +got):\n%s", ld.Warnings, d)
			}
			if got, want := jTexts(ld.Messages), append(tc.want, "u3"); !cmp.Equal(got, want) {
				t.Errorf("messages after append %q, want %q", got, want)
			}
		})
	}
}

func jCheckWarn(t *testing.T, what string, ws []string, want string) {
	t.Helper()
	if want == "" {
		if len(ws) != 0 {
			t.Errorf("%s: unexpected warnings %q", what, ws)
		}
		return
	}
	if len(ws) != 1 || !strings.HasPrefix(ws[0], want) {
		t.Errorf("%s: warnings %q, want one starting %q", what, ws, want)
	}
}

// jPrefixes cuts each warning to the length of the wanted one at its index.
func jPrefixes(ws, want []string) []string {
	var out []string
	for i, w := range ws {
		if i < len(want) && len(w) > len(want[i]) {
			w = w[:len(want[i])]
		}
		out = append(out, w)
	}
	return out
}

func jTexts(ms []llm.Message) []string {
	var out []string
	for i := range ms {
		out = append(out, ms[i].TextOf())
	}
	return out
}

func TestJournalHeaderErrors(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"empty file", "", "line 1: no session header (empty file)"},
		{"only blank lines", "\n\n  \n", "line 1: no session header (empty file)"},
		{"not json", "hello\n", "line 1: no session header: invalid character"},
		{"torn header", `{"type":"session","version":3,"id":"ab`, "line 1: no session header: unexpected end"},
		{"an entry first", `{"type":"message","id":"a","parentId":null,"timestamp":"x","message":{"role":"user","content":"hi"}}` + "\n", `line 1: no session header: first entry has type "message"`},
		{"no id", `{"type":"session","version":3,"timestamp":"x","cwd":"/"}` + "\n", "line 1: session header has no id"},
		{"numeric id", `{"type":"session","version":3,"id":7,"cwd":"/"}` + "\n", "line 1: session header has no id"},
		{"after blank line", "\n" + `[1,2]` + "\n", "line 2: no session header"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.jsonl")
			os.WriteFile(p, []byte(tc.content), 0o600)
			_, _, err := Open(p)
			if err == nil || !strings.HasPrefix(err.Error(), "journal: open "+p+": "+tc.want) {
				t.Errorf("err %v, want prefix %q", err, "journal: open "+p+": "+tc.want)
			}
			if _, err2 := Load(p); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Load: %v, want %v", err2, err)
			}
		})
	}
	_, _, err := Open(filepath.Join(t.TempDir(), "missing.jsonl"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "journal: open ") {
		t.Errorf("missing file: %v", err)
	}
}

func TestJournalClose(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := j.AppendMessage(jUser("x", 1), false); !errors.Is(err, os.ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if err := j.SetName(" "); err == nil {
		t.Error("empty name accepted")
	}
}

// TestJournalLongLine checks that a message far above any usual buffer
// size survives the round trip.
func TestJournalLongLine(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef\n\"", 5<<20/18)
	j.AppendMessage(jUser("before", 1), false)
	j.AppendMessage(jUser(big, 2), false)
	j.AppendMessage(jUser("after", 3), false)
	j.Close()
	ld, err := Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := jTexts(ld.Messages); len(got) != 3 || got[1] != big || got[2] != "after" || len(ld.Warnings) != 0 {
		t.Errorf("got %d messages, warnings %q", len(got), ld.Warnings)
	}
}
