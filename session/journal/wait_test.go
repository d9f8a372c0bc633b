package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// TestInterruptedWait: only a session file whose last whole entry is a
// wait that did not end was stopped during it; a torn line after it (a
// crash mid-write) does not hide it.
func TestInterruptedWait(t *testing.T) {
	until := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	wait := Wait{Attempt: 1, MaxAttempts: 3, Until: until, Reason: "429"}
	tests := []struct {
		name  string
		write func(j *Journal)
		torn  string
		want  bool
	}{
		{"wait last", func(j *Journal) { j.AppendWait(wait) }, "", true},
		{"torn line after it", func(j *Journal) { j.AppendWait(wait) }, `{"type":"message","id":"ab`, true},
		{"message after it", func(j *Journal) {
			j.AppendWait(wait)
			j.AppendMessage(llm.Message{Role: llm.Assistant, StopReason: llm.Stop}, false)
		}, "", false},
		{"ended", func(j *Journal) { j.AppendWait(wait); e := wait; e.End = EndCancelled; j.AppendWait(e) }, "", false},
		{"no wait", func(j *Journal) { j.AppendMessage(llm.Message{Role: llm.User}, false) }, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			j, err := CreateAt(path, "/w")
			if err != nil {
				t.Fatal(err)
			}
			tt.write(j)
			j.Close()
			if tt.torn != "" {
				f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(tt.torn)
				f.Close()
			}
			w, err := InterruptedWait(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := w != nil; got != tt.want || got && (!w.Until.Equal(until) || w.Attempt != 1) {
				t.Errorf("InterruptedWait = %+v, want found %v", w, tt.want)
			}
			// pi's reader and rally's own keep the wait out of the context.
			ld, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ld.Messages {
				if m.Role != llm.User && m.Role != llm.Assistant {
					t.Errorf("the wait reached the context as %+v", m)
				}
			}
		})
	}
	if _, err := InterruptedWait(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Error("a missing file gave no error")
	}
}
