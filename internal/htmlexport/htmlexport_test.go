package htmlexport

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

func TestWrite(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("<script>alert(1)</script> please")}},
		{Role: llm.Assistant, Provider: "p", Model: "m", Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "hmm"},
			llm.Text("the key is sk-secret"),
			{Type: llm.ToolCallType, Name: "read", Arguments: []byte(`{"path":"a.go"}`)},
		}},
		{Role: llm.ToolResult, ToolName: "read", IsError: true, Content: []llm.Content{llm.Text("no such file")}},
	}
	var b strings.Builder
	err := Write(&b, Page{Title: "T <b>", Messages: msgs, Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") }})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt; please", "T &lt;b&gt;", "hmm", "[redacted]", "read", "&#34;path&#34;: &#34;a.go&#34;", "no such file", "toolResult failed"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, not := range []string{"<script", "sk-secret", "http://", "https://"} {
		if strings.Contains(page, not) {
			t.Errorf("page holds %q: it must be self-contained, script-free and redacted", not)
		}
	}
}
