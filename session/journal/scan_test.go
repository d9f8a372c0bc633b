package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scanFile is a session file with what Scan must cope with: blank and
// CRLF lines, a corrupt line, a name, a compaction and a torn last line.
func scanFile(t *testing.T) string {
	t.Helper()
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T10:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"hello ünïcode","timestamp":1}}`,
		``,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-04T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"stopReason":"error","errorMessage":"529 overloaded","timestamp":2},"retried":true}` + "\r",
		`{"type":"message","id":"bad",`,
		`{"type":"session_info","id":"c","parentId":"b","timestamp":"2026-03-04T10:00:03.000Z","name":"  my session "}`,
		`{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-03-04T10:00:04.000Z","summary":"sum","firstKeptEntryId":"a","tokensBefore":42}`,
		`{"type":"message","id":"e","parentId":"d","timestamp":"2026-03-04T10:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":5}}`,
		`{"type":"message","id":"torn","parentId":"e","times`,
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Scan gives the entries Load gives, and from the place of any of them the
// rest of the file, so a viewer can read a page again from where it starts.
func TestScanMatchesLoad(t *testing.T) {
	p := scanFile(t)
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []Entry
	var at []Pos
	sc, err := Scan(context.Background(), p, Pos{}, func(e *Entry, pos Pos) bool {
		got = append(got, *e)
		at = append(at, pos)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	// Load points message entries into its context; compare what they say.
	opts := cmp.Options{cmp.AllowUnexported(Entry{}), cmpopts.EquateEmpty()}
	if d := cmp.Diff(ld.Entries, got, opts); d != "" {
		t.Errorf("Scan's entries differ from Load's (-Load +Scan):\n%s", d)
	}
	if sc.ID != "s1" || sc.Cwd != "/p" || sc.Name != "my session" {
		t.Errorf("scanned %+v", sc)
	}
	if want := []string{"line 5: corrupt entry skipped", "line 9: torn last line skipped"}; len(sc.Warnings) != 2 ||
		!strings.HasPrefix(sc.Warnings[0], want[0]) || !strings.HasPrefix(sc.Warnings[1], want[1]) {
		t.Errorf("warnings %q, want the prefixes %q", sc.Warnings, want)
	}
	for i := range got {
		t.Run(fmt.Sprintf("from entry %s", got[i].ID), func(t *testing.T) {
			var rest []Entry
			_, err := Scan(context.Background(), p, at[i], func(e *Entry, _ Pos) bool {
				rest = append(rest, *e)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(got[i:], rest, opts); d != "" {
				t.Errorf("from %+v (-want +got):\n%s", at[i], d)
			}
		})
	}
}

// A file of many bad lines keeps maxScanWarnings warnings and counts the
// rest; a scan stops when fn says so, and when its context ends.
func TestScanBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s1","cwd":"/p"}` + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","message":{"role":"user","content":"p"}}`+"\n", i)
		b.WriteString("not json\n")
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	sc, err := Scan(context.Background(), p, Pos{}, func(*Entry, Pos) bool { n++; return true })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1000 || len(sc.Warnings) != maxScanWarnings || sc.MoreWarnings != 1000-maxScanWarnings {
		t.Errorf("%d entries, %d warnings and %d more; want 1000, %d and %d", n, len(sc.Warnings), sc.MoreWarnings, maxScanWarnings, 1000-maxScanWarnings)
	}
	n = 0
	if _, err := Scan(context.Background(), p, Pos{}, func(*Entry, Pos) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Errorf("stopping after 3: %d entries, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, p, Pos{}, func(*Entry, Pos) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled scan: %v, want context.Canceled", err)
	}
}
