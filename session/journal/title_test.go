package journal

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// TestFirstPrompt: a session list's title is the first prompt a user
// typed, whatever compaction did to the context since.
func TestFirstPrompt(t *testing.T) {
	user := func(text string) llm.Message {
		return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}
	}
	answer := llm.Message{Role: llm.Assistant, Content: []llm.Content{llm.Text("an answer")}, StopReason: llm.Stop}
	cases := []struct {
		name    string
		msgs    []llm.Message
		compact bool // a compaction after the messages, keeping the last one
		want    string
	}{
		{"plain", []llm.Message{user("fix the test"), answer, user("and now?")}, false, "fix the test"},
		{"compacted", []llm.Message{user("fix the test"), answer, user("and now?"), answer}, true, "fix the test"},
		{"a blank prompt is no title", []llm.Message{user("  "), answer, user("the real one")}, false, "the real one"},
		{"no prompt yet", nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := Create(t.TempDir(), "/work")
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			var last string
			for _, m := range c.msgs {
				if last, err = j.AppendMessage(m, false); err != nil {
					t.Fatal(err)
				}
			}
			if c.compact {
				if err := j.AppendCompaction("## Goal\nfix the test", last, 1000, time.Unix(1_700_000_000, 0)); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			if c.compact && l.Messages[0].TextOf() != SummaryText("## Goal\nfix the test") {
				t.Fatalf("the context does not start with the summary: %q", l.Messages[0].TextOf())
			}
			if got := l.FirstPrompt(); got != c.want {
				t.Errorf("FirstPrompt %q, want %q", got, c.want)
			}
		})
	}
}
