package gemini

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm/internal/providertest"
)

// textStream is n text chunks shaped like the API's own, each with its
// usage, the last with the finish reason.
func textStream(n int) []byte {
	var b strings.Builder
	for i := range n {
		finish := ""
		if i == n-1 {
			finish = "STOP"
		}
		b.WriteString(chunkOf(text(fmt.Sprintf(" word%d", i%10)), finish, []int{25, i + 1, 0, 0}))
	}
	return []byte(b.String())
}

// BenchmarkGeminiChunk measures the cost of one streamed text chunk, from
// SSE bytes to the event a caller reads.
func BenchmarkGeminiChunk(b *testing.B) {
	const n = 1000
	providertest.Bench(b, textStream(n), n, parse)
}
