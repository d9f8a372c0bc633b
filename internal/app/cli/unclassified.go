package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rally-agent/rally/internal/unclassified"
	"github.com/rally-agent/rally/session"
)

// unclassifiedLog keeps the errors no classifier rule recognised in
// $RALLY_HOME/unclassified.jsonl, redacted of every key the run knows
// (keys, runSecrets'); `rally classify --unclassified` prints them.
func unclassifiedLog(home string, keys []string) session.Unclassified {
	return &unclassified.File{Path: unclassified.Path(home), Keys: keys}
}

// corpusLine is an unclassified error in the corpus format of
// retry/testdata/corpus, ready to paste into a report: want is what the
// fallback decided, to be checked by whoever adds it.
type corpusLine struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	Status   *int   `json:"status,omitempty"`
	Body     string `json:"body"`
	Want     string `json:"want"`
	HintMs   *int64 `json:"hintMs"`
	Source   string `json:"source"`
	Note     string `json:"note"`
}

// printUnclassified writes the kept unclassified errors of home as corpus
// lines, oldest first.
func printUnclassified(w io.Writer, home string) error {
	all, err := (&unclassified.File{Path: unclassified.Path(home)}).All()
	if err != nil {
		return fmt.Errorf("classify: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, e := range all {
		l := corpusLine{
			Name:     fmt.Sprintf("unclassified-%d-%s", i+1, cmp.Or(e.Provider, "unknown")),
			Provider: e.Provider,
			Body:     e.Body,
			Want:     e.Class.String(),
			Source:   "rally unclassified.jsonl, first seen " + e.At.UTC().Format(time.RFC3339),
			Note:     "decided by the fallback (" + e.Reason + "); check want before adding it to the corpus",
		}
		if e.Status != 0 {
			l.Status = &e.Status
			l.Name += "-" + strconv.Itoa(e.Status)
		}
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("classify: write: %w", err)
		}
	}
	return nil
}
