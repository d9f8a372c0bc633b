package llmtest

import (
	"fmt"
	"strings"
	"time"
)

// midstreamText is long enough that a drop after 3 chunks leaves most of
// it unsaid.
const midstreamText = "This answer was cut off mid-stream and then sent again in full by the fake server."

// UsageResetDemo is when the usage-reset preset's limit lifts: longer
// than a retry's default 60 s cap would be dull, so 10 s, which the demo
// waits out with retry.waitForReset.
const UsageResetDemo = 10 * time.Second

// Preset returns the named script, a fresh copy on every call; see the
// package documentation for what each does.
func Preset(name string) ([]Step, error) {
	switch name {
	case "flaky":
		return []Step{{Fault: HTTPError, Status: 503}, {}}, nil
	case "overloaded":
		return []Step{{Fault: HTTPError, Error: Overloaded}, {Fault: HTTPError, Error: Overloaded}, {}}, nil
	case "rate-limited":
		return []Step{{Fault: HTTPError, Error: RateLimited, Header: map[string]string{"retry-after": "1"}}, {}}, nil
	case "usage-limit":
		return []Step{{Fault: HTTPError, Error: UsageLimit}, {}}, nil
	case "usage-reset":
		return []Step{{Fault: HTTPError, Error: UsageLimit, ResetIn: UsageResetDemo}, {}}, nil
	case "overflow":
		// The second request is the client's compaction asking for a
		// summary of the History it sent.
		return []Step{{Fault: HTTPError, Error: Overflow}, {Text: overflowSummary}, {}}, nil
	case "midstream-drop":
		return []Step{{Fault: Drop, After: 3, Text: midstreamText}, {Text: midstreamText}}, nil
	case "stall":
		return []Step{{Fault: Stall, After: 2}, {}}, nil
	case "resume":
		// For a client in Responses background mode: the connection
		// drops after 6 chunks while the stored response goes on, and a
		// GET with starting_after reads the rest (no step of its own).
		return []Step{{Fault: Drop, After: 6, Text: midstreamText}, {Text: midstreamText}}, nil
	}
	return nil, fmt.Errorf("llmtest: no preset %q (have %s)", name, strings.Join(Presets(), ", "))
}

// Presets lists the preset names.
func Presets() []string {
	return []string{"flaky", "midstream-drop", "overflow", "overloaded", "rate-limited", "resume", "stall", "usage-limit", "usage-reset"}
}

// Turn is one message of a conversation: Role "user" or "assistant".
type Turn struct {
	Role, Text string
}

// History returns the conversation a preset is meant to continue, for a
// client to start from (rally's --preset demo does): the overflow preset
// needs one worth compacting, the others none (nil).
func History(name string) []Turn {
	if name != "overflow" {
		return nil
	}
	var log strings.Builder
	log.WriteString("$ go test ./report/...\n")
	for i := range 60 {
		fmt.Fprintf(&log, "=== RUN   TestExportCSV/row_%03d\n--- PASS: TestExportCSV/row_%03d (0.00s)\n", i, i)
	}
	log.WriteString("PASS\nok  \texample.com/shop/report\t0.412s")
	return []Turn{
		{"user", "The report command should be able to write CSV. Add a --csv flag to `shop report` that writes the same rows as the table, with a header row."},
		{"assistant", "I added `--csv` to `shop report` in report/cmd.go. It reuses the rows the table printer gets, writes them with encoding/csv (so commas and quotes in product names are escaped), and puts the column names in a header row. The table output is unchanged without the flag. I also added TestExportCSV in report/csv_test.go with one case per fixture row."},
		{"user", "Run the tests and show me the output."},
		{"assistant", "All of them pass:\n\n" + log.String()},
		{"user", "Good. Make the header row optional: --no-header."},
		{"assistant", "Done: `shop report --csv --no-header` skips the header row; `--no-header` without `--csv` is refused with a usage error. The tests cover both."},
	}
}

// overflowSummary is the overflow preset's answer to the compaction's
// summary request: the History, summarised as rally asks.
const overflowSummary = `## Goal
Add CSV output to ` + "`shop report`" + `: a --csv flag, then an optional header row (--no-header).

## Decisions
- CSV reuses the table's rows and encoding/csv, so names with commas or quotes are escaped.
- --no-header without --csv is a usage error.

## Files touched
- report/cmd.go: the --csv and --no-header flags.
- report/csv_test.go: TestExportCSV, one case per fixture row.

## Done
- bash: go test ./report/... (60 cases, all pass)

## Open tasks
Continue with the user's next request.`
