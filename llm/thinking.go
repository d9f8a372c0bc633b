package llm

import "slices"

// ThinkingOff asks a model not to reason; it is the only level of a model
// that cannot.
const ThinkingOff = "off"

// ThinkingLevels are the reasoning levels m accepts, weakest first, with
// pi's names: "off" alone for a model without reasoning, else "off",
// "minimal", "low", "medium" and "high". Each provider client turns a
// level into what its API takes (a reasoning effort, a token budget).
// pi's "xhigh" and "max" are left out: no model rally knows takes them.
func ThinkingLevels(m Model) []string {
	if !m.Reasoning {
		return []string{ThinkingOff}
	}
	return AllThinkingLevels()
}

// AllThinkingLevels are every level any model accepts (what --thinking
// and set_thinking_level take).
func AllThinkingLevels() []string {
	return []string{ThinkingOff, "minimal", "low", "medium", "high"}
}

// ValidThinking reports whether level is one of AllThinkingLevels.
func ValidThinking(level string) bool { return slices.Contains(AllThinkingLevels(), level) }
