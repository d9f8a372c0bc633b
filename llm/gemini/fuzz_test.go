package gemini

import (
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// FuzzParse feeds arbitrary bytes to the parser as the response body; see
// providertest.Fuzz for what must hold. Every call also has an id, made up
// where Gemini sends none.
func FuzzParse(f *testing.F) {
	providertest.Fuzz(f, parse, func(t *testing.T, m *llm.Message) {
		for _, c := range m.ToolCalls() {
			if c.ID == "" {
				t.Fatalf("tool call %+v", c)
			}
		}
	},
		textBody("a", "b"),
		chunkOf(thought("t")+","+call("f", `{"a":[1]}`, "id1", "s")+","+text("x"), "STOP", []int{1, 2, 3, 4}),
		data(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`))
}
