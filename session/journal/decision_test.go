package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// Lines carrying a decision are read in one pass exactly as encoding/json
// reads them, a repeated key and null included.
func TestDecodeDecision(t *testing.T) {
	msg := `"message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"529","timestamp":1}`
	for _, tc := range []struct {
		name, line string
		fast       bool
	}{
		{"recorded", `{"type":"message","id":"a",` + msg + `,"retried":true,"decision":{"attempt":1,"delayMs":2000,"class":"transient","reason":"transient: retry 1/3 in 2s","switchedTo":"b"}}`, true},
		{"chain end", `{"type":"message","id":"a",` + msg + `,"decision":{"attempt":3,"class":"transient","end":"exhausted"}}`, true},
		{"repeated", `{"type":"message","id":"a",` + msg + `,"decision":{"attempt":1},"decision":{"class":"fatal"}}`, true},
		{"null", `{"type":"message","id":"a",` + msg + `,"decision":{"attempt":1},"decision":null}`, true},
		{"odd field", `{"type":"message","id":"a",` + msg + `,"decision":{"attempt":"one"}}`, false},
		{"other case", `{"type":"message","id":"a",` + msg + `,"Decision":{"attempt":1}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkEntry(t, []byte(tc.line)); got != tc.fast {
				t.Errorf("read in one pass: %v, want %v", got, tc.fast)
			}
		})
	}
}

// What the session writes is what a viewer reads back, not estimated.
func TestDecisionRoundTrip(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	failed := llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: "529 overloaded", Timestamp: 5}
	want := Decision{Attempt: 2, DelayMs: 4000, Class: "transient", Reason: "transient: retry 2/3 in 4s", SwitchedTo: "openai/gpt-5"}
	if _, err := j.AppendDecided(failed, true, &want); err != nil {
		t.Fatal(err)
	}
	j.Close()
	ld, err := Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := ld.Entries[0].Decision(); got == nil || *got != want {
		t.Errorf("decision %+v, want %+v", got, want)
	}
}

// A file without decisions (older rally, pi) still shows what happened,
// worked out from the stored text and the library's defaults, and says
// it is estimated.
func TestEstimatedDecisions(t *testing.T) {
	call := func(n int, stop, errMsg, content string, retried bool) string {
		line := fmt.Sprintf(`{"type":"message","id":"%02d","timestamp":"2026-03-04T10:00:%02d.000Z","message":{"role":"assistant","provider":"anthropic","content":[%s],"stopReason":%q,"errorMessage":%q,"timestamp":%d}`,
			n, n, content, stop, errMsg, 1772618400000+int64(n)*1000)
		if retried {
			line += `,"retried":true`
		}
		return line + "}"
	}
	user := func(n int) string {
		return fmt.Sprintf(`{"type":"message","id":"%02d","timestamp":"2026-03-04T10:00:%02d.000Z","message":{"role":"user","content":"go","timestamp":1}}`, n, n)
	}
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-03-04T10:00:00.000Z","cwd":"/p"}`,
		user(1),
		call(2, "error", "529 overloaded_error: Overloaded", "", true),
		call(3, "error", "stream idle for 30s", "", true), // retried, so transient whatever the text says
		call(4, "stop", "", `{"type":"text","text":"ok"}`, false),
		user(5),
		call(6, "error", "prompt is too long: 250000 tokens > 200000 maximum", "", true),
		call(7, "error", "401 invalid x-api-key", "", false),
		user(8),
		call(9, "aborted", "", `{"type":"text","text":"half"}`, false),
		call(10, "stop", "", `{"type":"text","text":"plain"}`, false),
	}
	p := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ld.Entries {
		if e.Decision() != nil {
			t.Fatalf("entry %s: Load estimated a decision itself", e.ID)
		}
	}
	ld.EstimateDecisions()
	var got []string
	for _, e := range ld.Entries {
		if e.Message.Role != llm.Assistant {
			continue
		}
		d := e.Decision()
		if d == nil {
			got = append(got, "-")
			continue
		}
		if !d.Estimated {
			t.Errorf("entry %s: not marked as estimated", e.ID)
		}
		got = append(got, fmt.Sprintf("%d/%d/%s/%s", d.Attempt, d.DelayMs, d.Class, d.End))
	}
	want := []string{"1/2000/transient/", "2/4000/transient/", "2/0//succeeded",
		"0/0/context_overflow/compaction", "0/0/fatal/failed", "0/0//cancelled", "-"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("estimates\n got %q\nwant %q", got, want)
	}
}
