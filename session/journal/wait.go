package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// WaitType is the customType of the custom entry that records a wait for
// a usage limit's reset (retry.waitForReset). A custom entry is one pi's
// reader keeps out of the model's context, as rally's does.
const WaitType = "rally.retry_wait"

// Wait is a wait for a usage limit's reset, written when it begins. The
// failed call it waits to retry is written when the wait ends, so a
// session file whose last entry is a Wait without End was stopped during
// the wait (InterruptedWait).
type Wait struct {
	// Attempt is the retry the wait leads to, of MaxAttempts.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"maxAttempts"`
	// Until is when the retry is due: the stated reset plus the margin.
	Until time.Time `json:"until"`
	// Reason is the failure's message.
	Reason string `json:"reason,omitempty"`
	// End is set on a Wait that records how a resumed wait ended without
	// a call after it (cancelled), so it is not resumed again.
	End End `json:"end,omitempty"`
}

type waitEntry struct {
	Type       string `json:"type"`
	CustomType string `json:"customType"`
	Data       Wait   `json:"data"`
}

// AppendWait writes w as a custom entry.
func (j *Journal) AppendWait(w Wait) error {
	_, err := j.append("custom", struct {
		CustomType string `json:"customType"`
		Data       Wait   `json:"data"`
	}{WaitType, w})
	return err
}

// tailBytes is how much of a file's end InterruptedWait reads: far more
// than one Wait line, so the last whole line is always in it.
const tailBytes = 64 << 10

// InterruptedWait returns the wait for a reset that the session file at
// path was stopped in: its last whole entry is a Wait that did not end.
// nil when there is none.
func InterruptedWait(path string) (*Wait, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: interrupted wait: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("journal: interrupted wait: %w", err)
	}
	from := max(0, st.Size()-tailBytes)
	tail := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(tail, from); err != nil && err != io.EOF {
		return nil, fmt.Errorf("journal: interrupted wait: %w", err)
	}
	return lastWait(tail), nil
}

// lastWait reads the last whole line of tail as an unfinished Wait. A torn
// last line (a crash mid-write) is passed over for the line before it.
func lastWait(tail []byte) *Wait {
	tail = bytes.TrimRight(tail, "\n")
	for range 2 {
		i := bytes.LastIndexByte(tail, '\n')
		line := tail[i+1:]
		var e waitEntry
		if json.Unmarshal(line, &e) == nil {
			if e.Type == "custom" && e.CustomType == WaitType && e.Data.End == "" && !e.Data.Until.IsZero() {
				return &e.Data
			}
			return nil
		}
		if i < 0 {
			return nil
		}
		tail = tail[:i]
	}
	return nil
}
