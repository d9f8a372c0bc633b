package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rally-agent/rally/internal/jsonl"
	"github.com/rally-agent/rally/retry"
	"github.com/spf13/cobra"
)

func newClassifyCmd(s streams) *cobra.Command {
	var explain, unclass bool
	cmd := &cobra.Command{
		Use:   "classify",
		Short: "Classify provider errors read as JSON lines on stdin",
		Long: `Reads one JSON object per line on stdin, each describing a failed model call:

  {"provider": "openai", "status": 429, "headers": {"retry-after": "2"}, "body": "…"}

and writes one JSON line per input, in order, with its class (transient,
usage_limit, context_overflow or fatal), the wait the server asked for, and
the rule that decided:

  {"class": "transient", "retryAfterMs": 2000, "reason": "transient: http 429"}

"body" may be a string or a JSON value. A line that cannot be read gets an
answer with "error", and the run goes on.

--explain adds which signal decided (overflow, header, code, family,
status, wait, network, text, none), the window and request size an
overflow states, and "fallback": true when no rule recognised the error.

--unclassified reads no input: it prints the errors rally met that no rule
recognised ($RALLY_HOME/unclassified.jsonl, kept once each with keys
redacted) as lines of the classifier's test corpus, ready to report.`,
		Example: `  echo '{"status":529,"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}' | rally classify
  rally classify --explain < examples/errors.jsonl
  rally classify --unclassified`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if unclass {
				return printUnclassified(s.out, rallyHome())
			}
			return classifyLines(s.in, s.out, s.clock, explain)
		},
	}
	cmd.Flags().BoolVar(&explain, "explain", false, "also print which signal decided and the sizes an overflow states")
	cmd.Flags().BoolVar(&unclass, "unclassified", false, "print the errors no rule recognised, in the corpus format")
	cmd.MarkFlagsMutuallyExclusive("explain", "unclassified")
	return cmd
}

type classifyIn struct {
	Provider string            `json:"provider"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
}

type classifyOut struct {
	Class        string `json:"class,omitempty"`
	RetryAfterMs *int64 `json:"retryAfterMs"`
	Reason       string `json:"reason,omitempty"`
	Error        string `json:"error,omitempty"`
	*explained
}

// explained is what --explain adds to an answer.
type explained struct {
	// Signal is the kind of evidence that decided (retry.Signal).
	Signal string `json:"signal"`
	// Window and Requested are the sizes an overflow states.
	Window    int `json:"window,omitempty"`
	Requested int `json:"requested,omitempty"`
	// Fallback is true when no rule recognised the error: only the text
	// fallback or the Fatal default decided.
	Fallback bool `json:"fallback,omitempty"`
}

// maxClassifyLine bounds one input line; error bodies are small, and a
// runaway line must not eat the machine.
const maxClassifyLine = 16 << 20

func classifyLines(in io.Reader, out io.Writer, clock func() time.Time, explain bool) error {
	lr := jsonl.NewReader(in, maxClassifyLine)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		line, err := lr.Next()
		var ans classifyOut
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, jsonl.ErrTooLong):
			ans = classifyOut{Error: fmt.Sprintf("classify: line %d: longer than %d bytes", n, maxClassifyLine)}
		case err != nil:
			return fmt.Errorf("classify: read line %d: %w", n, err)
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			ans = classifyLine(line, clock())
		}
		if !explain {
			ans.explained = nil
		}
		if err := enc.Encode(ans); err != nil {
			return fmt.Errorf("classify: write: %w", err)
		}
	}
}

func classifyLine(line []byte, now time.Time) classifyOut {
	var in classifyIn
	if err := json.Unmarshal(line, &in); err != nil {
		return classifyOut{Error: "classify: bad input: " + classifyInputError(err)}
	}
	f := retry.Failure{Provider: in.Provider, Status: in.Status, Body: bodyText(in.Body)}
	if len(in.Headers) > 0 {
		f.Header = http.Header{}
		for k, v := range in.Headers {
			f.Header.Set(k, v)
		}
	}
	v := retry.Classify(f)
	o := classifyOut{Class: v.Class.String(), Reason: v.Reason,
		explained: &explained{Signal: v.Signal.String(), Window: v.Window, Requested: v.Requested, Fallback: v.Signal.Fallback()}}
	if h := retry.Hint(f, now); h > 0 {
		ms := h.Milliseconds()
		o.RetryAfterMs = &ms
	}
	return o
}

// bodyText accepts the body as a JSON string or as any JSON value, which is
// then classified as its text.
func bodyText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
