package retry

import (
	"bufio"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // corpus hints name IANA zones; do not depend on the machine's zone files
)

// corpusEntry is one real error, copied exactly from where it was seen
// (Source), with the class and hint DESIGN §2 gives it.
type corpusEntry struct {
	Name string `json:"name"`
	// Family groups entries by the kind of failure they show (issue 13's
	// families); optional.
	Family   string            `json:"family"`
	Provider string            `json:"provider"`
	Status   *int              `json:"status"`
	Headers  map[string]string `json:"headers"`
	Body     string            `json:"body"`
	Stream   bool              `json:"stream"`
	Want     Class             `json:"want"`
	HintMs   *int64            `json:"hintMs"`
	Now      *time.Time        `json:"now"`
	Source   string            `json:"source"`
	Note     string            `json:"note"`
}

func (e corpusEntry) failure() Failure {
	f := Failure{Provider: e.Provider, Body: e.Body, MidStream: e.Stream}
	if e.Status != nil && *e.Status != 200 {
		f.Status = *e.Status
	}
	if len(e.Headers) > 0 {
		f.Header = http.Header{}
		for k, v := range e.Headers {
			f.Header.Set(k, v)
		}
	}
	return f
}

// heldbackFile is the third of issue 23's errors kept out of tuning; only
// TestHeldback and the benchmarks read it.
const heldbackFile = "testdata/corpus/heldback.jsonl"

// loadCorpus reads the corpus the classifier is held to exactly: every file
// but the held-back one.
func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == heldbackFile })
	return readCorpus(t, files...)
}

// readCorpus reads the named corpus files; names must be unique across them.
func readCorpus(t testing.TB, files ...string) []corpusEntry {
	t.Helper()
	var all []corpusEntry
	seen := map[string]bool{}
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			if len(sc.Bytes()) == 0 {
				continue
			}
			var e corpusEntry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s:%d: %v", file, line, err)
			}
			if e.Name == "" || e.Source == "" || seen[e.Name] {
				t.Fatalf("%s:%d: entry needs a unique name and a source", file, line)
			}
			seen[e.Name] = true
			all = append(all, e)
		}
		fh.Close()
	}
	return all
}

// TestCorpus classifies every real error of the corpus and reads its hint.
func TestCorpus(t *testing.T) {
	entries := loadCorpus(t)
	providers, families := map[string]int{}, map[string]int{}
	for _, e := range entries {
		providers[e.Provider]++
		if e.Family != "" {
			families[e.Family]++
		}
		t.Run(e.Provider+"/"+e.Name, func(t *testing.T) {
			f := e.failure()
			if v := Classify(f); v.Class != e.Want {
				t.Errorf("class %v (%s), want %v\nbody: %.300s\nsource: %s", v.Class, v.Reason, e.Want, e.Body, e.Source)
			}
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			if e.Now != nil {
				now = *e.Now
			}
			var want int64
			if e.HintMs != nil {
				want = *e.HintMs
			}
			if got := Hint(f, now).Milliseconds(); got != want {
				t.Errorf("hint %d ms, want %d ms\nbody: %.300s", got, want, e.Body)
			}
		})
	}
	for _, f := range slices.Sorted(maps.Keys(families)) {
		t.Logf("family %-42s %d entries", f, families[f])
	}
	if len(entries) < 150 || len(providers) < 15 {
		t.Errorf("corpus has %d entries from %d providers; the issue asks for at least 150 from 15", len(entries), len(providers))
	}
}
