package unclassified

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/retry"
)

func newFile(t *testing.T) *File {
	t.Helper()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return &File{Path: filepath.Join(t.TempDir(), "unclassified.jsonl"), Keys: []string{"zz-known-key-0123456789"}, Now: func() time.Time { return at }}
}

// record classifies f as rally would and hands it to u.
func record(t *testing.T, u *File, f retry.Failure) {
	t.Helper()
	v := retry.Classify(f)
	if err := u.Record(context.Background(), f, retry.Report{Class: v.Class, Reason: v.Reason, Signal: v.Signal}); err != nil {
		t.Fatal(err)
	}
}

func TestRecord(t *testing.T) {
	odd := retry.Failure{Provider: "lab", Body: "the frobnicator jammed"}
	tests := []struct {
		name  string
		calls []retry.Failure
		want  []string // bodies kept, in order
	}{
		{"once per error", []retry.Failure{odd, odd, {Provider: "lab", Body: "  the frobnicator jammed \n"}}, []string{"the frobnicator jammed"}},
		{"another provider is another error", []retry.Failure{odd, {Provider: "other", Body: odd.Body}}, []string{odd.Body, odd.Body}},
		{"a recognised error is not kept", []retry.Failure{{Status: 429, Body: "slow down"}, {Body: "ECONNRESET"}}, nil},
		{"keys redacted", []retry.Failure{{Body: "echo zz-known-key-0123456789 and sk-proj-abcdefghijklmnop"}}, []string{"echo [redacted] and [redacted]"}},
		{"no body: the error's text", []retry.Failure{{Err: errors.New("wobble")}}, []string{"wobble"}},
		{"bodies bounded", []retry.Failure{{Body: strings.Repeat("é", MaxBody)}}, []string{strings.Repeat("é", MaxBody/2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newFile(t)
			for _, f := range tt.calls {
				record(t, u, f)
			}
			all, err := u.All()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range all {
				got = append(got, e.Body)
				if e.Class != retry.Fatal || e.Reason == "" || !e.At.Equal(u.Now()) {
					t.Errorf("entry %+v: want the fallback's fatal verdict, its reason and the time", e)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRecordFull: past MaxEntries nothing more is kept, and a file with a
// broken line still reads.
func TestRecordFull(t *testing.T) {
	u := newFile(t)
	var b strings.Builder
	b.WriteString("not json\n")
	for i := range MaxEntries {
		b.WriteString(`{"body":"e` + strings.Repeat("x", i) + `","class":"fatal"}` + "\n")
	}
	if err := os.WriteFile(u.Path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	record(t, u, retry.Failure{Body: "the frobnicator jammed"})
	all, err := u.All()
	if err != nil || len(all) != MaxEntries {
		t.Fatalf("%d entries (%v), want the %d already there", len(all), err, MaxEntries)
	}
}

// TestRecordCancelled: a context that ended keeps nothing and says so.
func TestRecordCancelled(t *testing.T) {
	u := newFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := retry.Failure{Body: "the frobnicator jammed"}
	v := retry.Classify(f)
	if err := u.Record(ctx, f, retry.Report{Class: v.Class, Signal: v.Signal}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
