package llmtest

import (
	"fmt"
	"strings"
)

// midstreamText is long enough that a drop after 3 chunks leaves most of
// it unsaid.
const midstreamText = "This answer was cut off mid-stream and then sent again in full by the fake server."

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
	case "overflow":
		return []Step{{Fault: HTTPError, Error: Overflow}, {}}, nil
	case "midstream-drop":
		return []Step{{Fault: Drop, After: 3, Text: midstreamText}, {Text: midstreamText}}, nil
	case "stall":
		return []Step{{Fault: Stall, After: 2}, {}}, nil
	}
	return nil, fmt.Errorf("llmtest: no preset %q (have %s)", name, strings.Join(Presets(), ", "))
}

// Presets lists the preset names.
func Presets() []string {
	return []string{"flaky", "midstream-drop", "overflow", "overloaded", "rate-limited", "stall", "usage-limit"}
}
