package htmlexport

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// TestWriteHostile pins how text from a session comes out in each place
// of the page (the bytes html/template wrote before the page moved to
// htmlw): the <title>, element text, the model note and a tool's label.
func TestWriteHostile(t *testing.T) {
	const evil = `</title></pre><script>alert(1)</script>"'&+`
	const esc = `&lt;/title&gt;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;&#43;`
	msgs := []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("q " + evil)}},
		{Role: llm.Assistant, Provider: "p" + evil, Model: "m", StopReason: "error", ErrorMessage: "e " + evil, Content: []llm.Content{
			{Type: llm.ToolCallType, Name: "t" + evil, Arguments: []byte(`not json ` + evil)},
			{Type: llm.ImageType, MimeType: "image/" + evil},
		}},
	}
	var b strings.Builder
	if err := Write(&b, Page{Title: "s " + evil, Model: "x" + evil, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	tests := []struct{ context, want string }{
		{"title", "<title>s " + esc + " · rally session</title>"},
		{"heading", "<h1>s " + esc + "</h1>"},
		{"meta", `<div class="meta">x` + esc + " · 2 messages"},
		{"message text", "<pre>q " + esc + "</pre>"},
		{"model note", `<div class="head">assistant · p` + esc + "/m</div>"},
		{"error", `<div class="error"><div class="label">error</div><pre>e ` + esc + "</pre>"},
		{"tool label and arguments", `<div class="call"><div class="label">t` + esc + "</div><pre>not json " + esc + "</pre>"},
		{"image", "<pre>[image image/" + esc + "]</pre>"},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			if !strings.Contains(page, tt.want) {
				t.Errorf("page lacks %s\n%s", tt.want, page)
			}
		})
	}
	if strings.Contains(page, "<script") || strings.Contains(page, evil) {
		t.Error("page holds the script unescaped")
	}
}
