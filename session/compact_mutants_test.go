package session

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// The tests in this file each catch mutants that lived through the rest of
// the session tests (scripts/mutate.sh): the transcript a summary request
// carries, at the edges of its per-message cap.

// summaryText compacts hist with an unknown window (one summary request)
// and returns the transcript that request carried and the request.
func summaryText(t *testing.T, hist []llm.Message) (string, *llm.Request) {
	text, r, _ := summaryOf(t, hist)
	return text, r
}

// summaryOf is summaryText that also returns how many messages the
// compacted context kept after its summary.
func summaryOf(t *testing.T, hist []llm.Message) (string, *llm.Request, int) {
	t.Helper()
	f := &fake{steps: []step{{text: "the summary"}}}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "fake"},
		Resume: &journal.Loaded{Messages: append(hist, history(4)...)}, Compaction: small})
	defer stop()
	if _, err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f.calls() != 1 {
		t.Fatalf("%d summary requests with the window unknown, want 1", f.calls())
	}
	r := f.request(0)
	return r.Messages[0].TextOf(), r, len(s.Messages()) - 1
}

func user(text string) llm.Message {
	return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}
}

func answer(text string) llm.Message {
	return llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(text)}}
}

// TestSummaryTranscriptCap: in the transcript sent for a summary, a
// message whose line fits the 4,000-character cap is sent whole; a longer
// one keeps its head (40 %) and tail with a marker counting exactly the
// characters left out, the line within the cap and using nearly all of
// it. With the window unknown the whole older part goes in one request,
// whose output budget is the model's default (1,024 tokens).
func TestSummaryTranscriptCap(t *testing.T) {
	// "[user]: " and the newline take 9 of the 4,000; the cut keeps 6 more.
	fits := strings.Repeat("f", perMessage-len("user")-6)
	over := strings.Repeat("h", 2500) + strings.Repeat("t", 2500)
	text, req, kept := summaryOf(t, []llm.Message{user(fits), answer("a"), user(over), answer("b")})
	if req.MaxTokens != 1024 {
		t.Errorf("summary request max tokens %d, want 1024 with no window known", req.MaxTokens)
	}
	// history(4)'s exchanges are ~130 tokens: keepRecentTokens 250 keeps
	// one whole (a window of 0 must not cap it to nothing).
	if kept != 2 {
		t.Errorf("kept %d messages with the window unknown, want the 2 that fit keepRecentTokens 250", kept)
	}
	t.Run("fits", func(t *testing.T) {
		if !strings.Contains(text, "[user]: "+fits+"\n") {
			t.Errorf("a message of %d characters, which fits the cap, was not sent whole", len(fits))
		}
	})
	t.Run("cut", func(t *testing.T) {
		m := regexp.MustCompile(`\[user\]: (h+)\n\[… (\d+) characters cut …\]\n(t+)\n`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no head, marker and tail for the long message in:\n%.300s", text)
		}
		head, tail := len(m[1]), len(m[3])
		cut, _ := strconv.Atoi(m[2])
		if head+cut+tail != len(over) {
			t.Errorf("head %d + cut %d + tail %d, want %d", head, cut, tail, len(over))
		}
		line := len(m[0])
		if line > perMessage || line < perMessage-40 {
			t.Errorf("the cut line has %d characters, want at most %d and close to it", line, perMessage)
		}
		if pct := head * 100 / (head + tail); pct < 38 || pct > 42 {
			t.Errorf("the head is %d %% of what is kept, want 40 %%", pct)
		}
	})
}

// TestSummaryTranscriptInvalidUTF8: a long message that is not UTF-8 at
// its cut points (a binary tool output) is cut without a panic and within
// the cap; the cut never splits a rune of a valid one.
func TestSummaryTranscriptInvalidUTF8(t *testing.T) {
	for _, tt := range []struct{ name, text string }{
		{"stray bytes", strings.Repeat("\x80", 3000) + "z" + strings.Repeat("\x80", 3000)},
		{"two-byte runes", strings.Repeat("é", 3000)},
		{"three-byte runes", strings.Repeat("€", 3000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := summaryText(t, []llm.Message{user(tt.text), answer("a")})
			start := strings.Index(text, "[user]: ")
			end := strings.Index(text, "\n[assistant]: a\n")
			if start < 0 || end < start {
				t.Fatalf("no line for the message in:\n%.300q", text)
			}
			if n := end + 1 - start; n > perMessage {
				t.Errorf("the cut line has %d bytes, want at most %d", n, perMessage)
			}
			if utf8.ValidString(tt.text) && !utf8.ValidString(text[start:end]) {
				t.Errorf("the cut split a rune")
			}
		})
	}
}

// TestRollingSummaryMargin: with a known window, every summary request of
// a rolling summary leaves the window's tenth free by the estimate even
// when each summary so far is as long as the output allows, and every
// older message reaches one of them (the last piece too).
func TestRollingSummaryMargin(t *testing.T) {
	const window = 2000
	var steps []step
	for i := range 30 {
		steps = append(steps, step{text: strings.Repeat("s", 1900) + " summary " + itoa(i+1)})
	}
	f := &fake{steps: steps}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: window},
		Resume: &journal.Loaded{Messages: history(30)}, Compaction: small})
	defer stop()
	if _, err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f.calls() < 3 {
		t.Fatalf("%d summary requests, want several", f.calls())
	}
	all := ""
	for i := range f.calls() {
		r := f.request(i)
		if n := requestTokens(r); n > window*90/100 {
			t.Errorf("summary request %d needs %d tokens with its output, want at most %d (a tenth of %d free)", i+1, n, window*90/100, window)
		}
		all += r.Messages[0].TextOf()
	}
	older := 60 - (len(s.Messages()) - 1) // the summary replaced them
	for i := range older / 2 {
		if !strings.Contains(all, "question "+llm.Key(i)+"\n") {
			t.Errorf("older question %d reached no summary request", i)
		}
	}
}

// TestCompactionKeep: the recent part kept whole is the longest tail of
// user and assistant messages within keepRecentTokens, a tail of exactly
// that many tokens included; when not even the last message fits, it is
// kept anyway and everything before it is summarised.
func TestCompactionKeep(t *testing.T) {
	hist := history(4)
	lastTwo := llm.MessageTokens(&hist[6]) + llm.MessageTokens(&hist[7])
	for _, tt := range []struct {
		name string
		keep int
		want int // messages kept after the summary
	}{
		{"exact fit", lastTwo, 2},
		{"one short", lastTwo - 1, 1},
		{"not even the last", 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{steps: []step{{text: "the summary"}}}
			s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(4)}, Compaction: CompactionConfig{KeepRecentTokens: tt.keep}})
			defer stop()
			if _, err := s.Compact(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := len(s.Messages()) - 1; got != tt.want {
				t.Errorf("kept %d messages, want %d", got, tt.want)
			}
		})
	}
}

// TestSummaryCallFailures: a refused summary call fails the compaction
// with an error saying so; a summary call that keeps failing transiently
// is retried the policy's 3 times (4 calls), not for ever.
func TestSummaryCallFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		f := &fake{steps: []step{{err: apiErr(401, `{"error":{"message":"invalid api key"}}`)}}}
		s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
		defer stop()
		_, err := s.Compact(t.Context())
		if err == nil || !strings.HasPrefix(err.Error(), "session: compaction: ") {
			t.Errorf("err %v, want one starting session: compaction:", err)
		}
	})
	t.Run("always overloaded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var steps []step
			for range 10 {
				steps = append(steps, step{err: overloaded()})
			}
			f := &fake{steps: steps}
			s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
			defer stop()
			_, err := s.Compact(t.Context())
			var api *llm.APIError
			if !errors.As(err, &api) || f.calls() != 4 {
				t.Errorf("err %v after %d calls, want the overload after 4", err, f.calls())
			}
		})
	})
}

// TestThresholdEdges: compaction after a run starts only when the last
// answer's context (input plus cache reads and writes) passes the
// threshold of a known window, not at it, and never with the window
// unknown.
func TestThresholdEdges(t *testing.T) {
	for _, tt := range []struct {
		name    string
		window  int
		usage   llm.Usage
		compact bool
	}{
		{"at the threshold", 1000, llm.Usage{Input: 850}, false},
		{"past it", 1000, llm.Usage{Input: 851}, true},
		{"cache reads count", 1000, llm.Usage{Input: 100, CacheRead: 800}, true},
		{"cache writes count", 1000, llm.Usage{Input: 100, CacheWrite: 800}, true},
		{"window unknown", 0, llm.Usage{Input: 900000}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{steps: []step{{text: "answer", usage: &tt.usage}, {text: "the summary"}}}
			s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(2)}, Compaction: small,
				Model: llm.Model{ID: "m", Provider: "p", ContextWindow: tt.window}})
			if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if got := len(of[CompactionStartEvent](rec)) > 0; got != tt.compact {
				t.Errorf("compacted %v after usage %+v in a window of %d, want %v", got, tt.usage, tt.window, tt.compact)
			}
		})
	}
}

// TestToolLoopWindowUnknown: with the window unknown a tool loop never
// pauses to compact.
func TestToolLoopWindowUnknown(t *testing.T) {
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
	f := &fake{steps: []step{{text: "let me count", calls: []llm.Content{call}, usage: &llm.Usage{Input: 1800}}, {text: "counted"}}}
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p"},
		Tools: []tool.Tool{&counter{}}, Resume: &journal.Loaded{Messages: history(2)}})
	if err := s.Prompt(t.Context(), "count", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := len(of[CompactionStartEvent](rec)); n != 0 || f.calls() != 2 {
		t.Errorf("%d compactions in %d calls, want none in 2", n, f.calls())
	}
}

// TestOverflowWithAutoCompactionOff: an overflow with auto-compaction off
// fails the prompt with no compaction_end (none started); a retry that
// failed before anything streamed discards no message.
func TestOverflowWithAutoCompactionOff(t *testing.T) {
	f := &fake{steps: []step{{err: overflowErr()}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(2)}})
	s.SetAutoCompactionEnabled(false)
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err == nil {
		t.Fatal("the overflow did not fail the prompt")
	}
	stop()
	if n := len(of[CompactionEndEvent](rec)); n != 0 {
		t.Errorf("%d compaction_end with auto-compaction off, want none", n)
	}
}

// TestPromptCountsBeforeTheCall: before a call, the prompt about to be
// sent counts with the context (no answer has counted either): a context
// below the threshold that the prompt takes past it is compacted first.
func TestPromptCountsBeforeTheCall(t *testing.T) {
	f := &fake{steps: []step{{text: "the summary"}, {text: "answer"}}}
	hist := history(6)
	window := llm.EstimateTokens(hist) * 100 / 80 // the context alone is 80 %
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: window},
		Resume: &journal.Loaded{Messages: hist}, Compaction: small})
	prompt := strings.Repeat("word ", window/5) // a quarter of the window
	if err := s.Prompt(t.Context(), prompt, PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := len(of[CompactionStartEvent](rec)); n != 1 || f.request(0).System != summaryPrompt {
		t.Errorf("%d compactions, first call %q; want the context compacted before the prompt is sent", n, f.request(0).System)
	}
}

// TestPromptCountsAfterTheCountedAnswer: when the last answer's usage
// counted the context, the prompt about to be sent is added to that
// count: 700 counted and a prompt of 250 pass the 85 % threshold of a
// 1,000-token window, so the context is compacted first.
func TestPromptCountsAfterTheCountedAnswer(t *testing.T) {
	f := &fake{steps: []step{{text: "the summary"}, {text: "answer"}}}
	counted := answer("counted")
	counted.Usage = &llm.Usage{Input: 690, Output: 10}
	hist := append(history(2), user("more"), counted)
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1000},
		Resume: &journal.Loaded{Messages: hist}, Compaction: small})
	if err := s.Prompt(t.Context(), strings.Repeat("word ", 200), PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := len(of[CompactionStartEvent](rec)); n != 1 || f.request(0).System != summaryPrompt {
		t.Errorf("%d compactions, first call %q; want the context compacted before the prompt is sent", n, f.request(0).System)
	}
}
