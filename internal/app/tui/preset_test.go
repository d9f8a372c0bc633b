package tui

import (
	"strings"
	"testing"
)

// TestTmuxPresetAnswersThePrompt: `rally --preset flaky "What does rally
// do?"` answers that prompt after the retry, and a later prompt gets its
// own answer. The UI used to start the demo's fake model before any prompt
// was known, so every prompt got the sim's answer to an empty one.
func TestTmuxPresetAnswersThePrompt(t *testing.T) {
	p := startRally(t, nil, 200, 30, "", "--preset", "flaky", "What does rally do?")
	p.waitFor("the answer to the first prompt", func(s string) bool {
		return strings.Contains(s, "rally runs LLM agent sessions whose turns survive") && idle(s)
	})
	p.typeLine("hello there")
	p.waitFor("the answer to the second prompt", func(s string) bool {
		return strings.Contains(s, `You asked: "hello there".`) && idle(s)
	})
}

// TestTmuxOverflowPresetWindow: the overflow demo's status line shows the
// 4,096-token window the README promises (it showed 128k: the credential
// rotation described the model again from the target, without the
// preset's window).
func TestTmuxOverflowPresetWindow(t *testing.T) {
	p := startRally(t, nil, 160, 30, "", "--preset", "overflow")
	p.waitFor("the status line with the demo's window", func(s string) bool {
		return strings.Contains(s, "fake-llm/fake-model · ctx ") && strings.Contains(s, "/4.1k") && idle(s)
	})
}
