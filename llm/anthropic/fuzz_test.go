package anthropic

import (
	"testing"

	"github.com/rally-agent/rally/llm/internal/providertest"
)

// FuzzParse feeds arbitrary bytes to the parser as the response body; see
// providertest.Fuzz for what must hold.
func FuzzParse(f *testing.F) {
	providertest.Fuzz(f, parse, nil,
		textBody("a", "b"),
		blockStart(3, `{"type":"tool_use","id":"t","name":"n"}`)+jsonDelta(3, `{"x":`)+blockStop(3)+msgStop,
		blockStart(0, `{"type":"redacted_thinking","data":"d"}`)+signatureDelta(0, "s")+ev("error", ""))
}
