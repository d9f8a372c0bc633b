package openai

import (
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

func TestReferenceCorpus(t *testing.T) {
	refs := providertest.References(t, func(r *providertest.Reference) bool {
		return strings.HasPrefix(r.API, "chat.completions") || r.API == "responses"
	})
	for _, rc := range refs {
		api := "completions"
		if rc.API == "responses" {
			api = "responses"
		}
		t.Run(rc.File, func(t *testing.T) {
			body, err := os.ReadFile(rc.Path())
			if err != nil {
				t.Fatal(err)
			}
			msg, err := run(t, provider(api, serveBytes(t, body).URL), request(llm.Model{ID: "m"}))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			x := rc.Expected
			w := want{text: x.Text, thinking: x.Reasoning, stop: refStop(x.StopReason, len(x.ToolCalls) > 0)}
			for _, c := range x.ToolCalls {
				w.calls = append(w.calls, wantCall{c.ID, c.Name, c.Args})
			}
			if u := x.Usage; u != nil {
				w.usage = &llm.Usage{Input: u.Input - u.Cached, Output: u.Output, CacheRead: u.Cached, TotalTokens: u.Total}
			}
			if x.Error != nil {
				w.errSub = x.Error.Type
				w.stop = llm.Error
			}
			// A stream that died before its terminal event fails, even if
			// the corpus names no error.
			if x.StopReason == nil && x.Error == nil {
				w.errSub = "truncated"
			}
			check(t, msg, err, w)
		})
	}
}

// refStop maps the corpus's provider-native terminal value.
func refStop(native *string, calls bool) llm.StopReason {
	if native == nil {
		return llm.Error
	}
	switch *native {
	case "length":
		return llm.Length
	case "failed":
		return llm.Error
	}
	if calls {
		return llm.ToolUse
	}
	return llm.Stop
}
