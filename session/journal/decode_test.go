package journal

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/rally-agent/rally/llm"
)

// slowEntry is what encoding/json makes of an entry line, as the fast
// decoder must: its fields and its message.
func slowEntry(line []byte) (entryFields, *llm.Message, error) {
	var f entryFields
	if err := json.Unmarshal(line, &f); err != nil {
		return f, nil, err
	}
	var m *llm.Message
	if len(f.Message) > 0 && string(f.Message) != "null" {
		m = new(llm.Message)
		if err := json.Unmarshal(f.Message, m); err != nil {
			return f, nil, err
		}
	}
	f.Message = nil
	return f, m, nil
}

// checkEntry fails when decodeEntry accepts a line and reads it otherwise
// than encoding/json.
func checkEntry(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	var s scanner
	f, m, ok := s.entry(line)
	if !ok {
		return false
	}
	wf, wm, err := slowEntry(line)
	if err != nil {
		t.Fatalf("%s: accepted, but encoding/json says %v", line, err)
	}
	if f.Type != "message" {
		m, wm = nil, nil
	}
	if !reflect.DeepEqual(f, wf) || !reflect.DeepEqual(m, wm) {
		t.Fatalf("%s:\n got %+v %+v\nwant %+v %+v", line, f, m, wf, wm)
	}
	return true
}

// entryLines are lines as rally and pi write them, and odd ones.
func entryLines(t testing.TB) []string {
	lines := strings.Split(strings.TrimSpace(jPiSession), "\n")[1:]
	path := longSession(t, 9)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")[1:]...)
	for _, m := range jRich() {
		mb, _ := json.Marshal(m)
		lines = append(lines, `{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":`+string(mb)+`}`)
	}
	return append(lines,
		`{"type":"message","id":"b","message":{"role":"user","content":"caf\u00e9 \ud83d\ude00 \ud83d x \ude00 \\ \" \/ \b\f\n\r\t","timestamp":-0}}`,
		`{"type":"message","id":"c","message":{"role":"user","content":null,"timestamp":1,"Extra":1,"usage":null}}`,
		`{"Type":"message","id":"d"}`,
		`{"type":"message","id":"e","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"a":[1,2.5e3,true,null,"x"]}}],"usage":{"input":1,"cost":{"total":1e-7}},"timestamp":1.5}}`,
		`{"type":"message","id":"f","message":{"role":"assistant","content":[],"usage":{"input":01}}}`,
		`{"type":"model_change","id":"g","parentId":"f","provider":"p","modelId":"m","thinkingLevel":"high"} `,
		`{"type":"compaction","id":"h","summary":"s","firstKeptEntryIndex":3}`,
		`{"type":"message","id":"i","message":{"role":"bashExecution","command":"ls"}}`,
		`{"type":"message","id":"j","message":{"role":"user","content":"\xff"}}`,
		`{"type":"message","id":"k"} x`,
		`{"type":"message","id":"l","retried":true,"message":{"role":"user","content":[{"type":"text","text":"a"},null]}}`,
	)
}

func TestDecodeEntry(t *testing.T) {
	fast := 0
	for _, l := range entryLines(t) {
		if checkEntry(t, []byte(l)) {
			fast++
		}
	}
	// The fast path must be the common one, not a path nothing takes.
	if fast < 20 {
		t.Fatalf("only %d lines decoded in one pass", fast)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, l := range entryLines(f) {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkEntry(t, line) })
}

// TestIntern: a name read twice, from different lines, is one copy; two
// names that share intern's table slot (same length and ends) are each
// read as themselves, and still one copy each.
func TestIntern(t *testing.T) {
	var s scanner
	first := s.intern([]byte("openai-completions"))
	for _, name := range []string{"openai-completions", "oxxxxxxxxxxxxxxxxs", "openai-completions", "oxxxxxxxxxxxxxxxxs"} {
		got := s.intern([]byte(name)) // a new buffer each time, as the next line is
		if got != name {
			t.Fatalf("intern(%q) = %q", name, got)
		}
		again := s.intern([]byte(name))
		if unsafe.StringData(got) != unsafe.StringData(again) {
			t.Errorf("intern(%q) made a second copy", name)
		}
		if name == "openai-completions" && unsafe.StringData(got) != unsafe.StringData(first) {
			t.Errorf("intern(%q) after a collision made a second copy", name)
		}
	}
	if got := s.intern(nil); got != "" {
		t.Errorf("intern of nothing = %q", got)
	}
}
