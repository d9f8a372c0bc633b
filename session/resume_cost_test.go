package session

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// dropCost is what one answer cost when its stream dropped: the tokens
// (chunks) streamed over every connection, the final answer's, the text
// shown twice, and the time to the final token.
type dropCost struct {
	streamed, final, wasted, duplicated int
	elapsed                             time.Duration
}

// answerWords is the 2,000-token answer of the drop benchmarks: one word,
// one chunk, one token.
func answerWords(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = "tok" + string(rune('a'+i%26))
	}
	return strings.Join(w, " ")
}

// runDrop streams an answer of n tokens that drops after dropAt of them
// (never, for dropAt 0) under restart or resume, each chunk delay apart,
// and measures what it cost.
func runDrop(tb testing.TB, n, dropAt int, resume bool, delay time.Duration) dropCost {
	tb.Helper()
	text := answerWords(n)
	first := llmtest.Step{Text: text, Delay: delay}
	if dropAt > 0 {
		first.Fault, first.After = llmtest.Drop, dropAt
	}
	srv := llmtest.NewServer(tb, first, llmtest.Step{Text: text, Delay: delay})
	s, rec, _, stop := resumeSession(tb, srv, resume)
	t0 := time.Now()
	if err := s.Prompt(tb.Context(), "write", PromptOptions{}); err != nil {
		tb.Fatal(err)
	}
	elapsed := time.Since(t0)
	stop()
	var c dropCost
	c.elapsed = elapsed
	// What the user was shown last: the deltas after the last discard.
	var shown strings.Builder
	for _, e := range rec.events {
		switch e := e.(type) {
		case MessageUpdateEvent:
			if e.Assistant != nil && e.Assistant.Type == llm.EventTextDelta {
				c.streamed++
				shown.WriteString(e.Assistant.Delta)
			}
		case MessageDiscardedEvent:
			shown.Reset()
		}
	}
	msgs := s.Messages()
	final := msgs[len(msgs)-1].TextOf()
	if final != text {
		tb.Fatalf("final answer of %d bytes, want the %d of the answer", len(final), len(text))
	}
	c.final = len(strings.Fields(final))
	c.wasted = c.streamed - c.final
	c.duplicated = len(shown.String()) - len(final)
	return c
}

// TestDropCost: a 2,000-token answer dropped at 70 %. Restart streams
// (and a provider bills) the first 1,400 tokens again; resume streams
// every token once. Neither shows text twice.
func TestDropCost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resume bool
		wasted int
	}{
		{"restart", false, 1400},
		{"resume", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runDrop(t, 2000, 1400, tc.resume, 0)
			if c.wasted != tc.wasted || c.duplicated != 0 || c.final != 2000 {
				t.Errorf("%+v, want %d tokens wasted, 0 duplicated, 2000 in the answer", c, tc.wasted)
			}
		})
	}
}

// BenchmarkDropCost runs the 2,000-token answer uninterrupted, dropped at
// 70 % and resumed, and dropped and restarted, 100 µs a token, and reports
// the time to the final token of each against the uninterrupted stream
// (resume's ratio should stay within 1.1 plus the reconnect wait, 1 ms
// here), with the tokens each streamed for nothing.
//
//	go test -run '^$' -bench BenchmarkDropCost -benchtime 3x ./session/
func BenchmarkDropCost(b *testing.B) {
	const delay = 100 * time.Microsecond
	var plain, resumed, restarted time.Duration
	var wastedResume, wastedRestart int
	for b.Loop() {
		plain += runDrop(b, 2000, 0, true, delay).elapsed
		r := runDrop(b, 2000, 1400, true, delay)
		resumed, wastedResume = resumed+r.elapsed, wastedResume+r.wasted
		x := runDrop(b, 2000, 1400, false, delay)
		restarted, wastedRestart = restarted+x.elapsed, wastedRestart+x.wasted
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Milliseconds())/n, "plain-ms")
	b.ReportMetric(float64(resumed)/float64(plain), "resume-ratio")
	b.ReportMetric(float64(restarted)/float64(plain), "restart-ratio")
	b.ReportMetric(float64(wastedResume)/n, "resume-wasted-tokens")
	b.ReportMetric(float64(wastedRestart)/n, "restart-wasted-tokens")
}
