// Package htmlexport writes a session as one self-contained HTML page: the
// conversation with its tool calls and results, styled inline, with no
// script and nothing loaded from elsewhere, so it opens anywhere and can be
// mailed or attached to an issue (RPC export_html).
package htmlexport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/htmlw"
	"github.com/rally-agent/rally/llm"
)

// Page is what one export shows.
type Page struct {
	// Title heads the page: the session's name, or its id.
	Title string
	// Model is the model the session is on, as provider/id.
	Model    string
	Messages []llm.Message
	// Redact is applied to every text that comes from the session (model
	// output, tool output, arguments); nil leaves them as they are.
	Redact func(string) string
}

// Write renders p to w. Every text is escaped for where it goes by
// htmlw (not html/template: see that package for why).
func Write(w io.Writer, p Page) error {
	red := p.Redact
	if red == nil {
		red = func(s string) string { return s }
	}
	v := view{Title: red(p.Title), Model: red(p.Model)}
	for _, m := range p.Messages {
		v.Messages = append(v.Messages, toView(m, red))
	}
	if _, err := w.Write(v.page()); err != nil {
		return fmt.Errorf("htmlexport: %w", err)
	}
	return nil
}

type view struct {
	Title, Model string
	Messages     []msgView
}

type msgView struct {
	Role, Class, When, Note string
	Blocks                  []blockView
}

type blockView struct {
	Kind, Label, Text string
}

func toView(m llm.Message, red func(string) string) msgView {
	v := msgView{Role: string(m.Role), Class: string(m.Role)}
	if m.Timestamp > 0 {
		v.When = time.UnixMilli(m.Timestamp).UTC().Format("2006-01-02 15:04:05 UTC")
	}
	switch m.Role {
	case llm.Assistant:
		v.Note = red(strings.TrimPrefix(m.Provider+"/"+m.Model, "/"))
		if m.ErrorMessage != "" {
			v.Blocks = append(v.Blocks, blockView{Kind: "error", Label: string(m.StopReason), Text: red(m.ErrorMessage)})
		}
	case llm.ToolResult:
		v.Role = "tool result"
		v.Note = red(m.ToolName)
		if m.IsError {
			v.Class += " failed"
		}
	}
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			v.Blocks = append(v.Blocks, blockView{Kind: "text", Text: red(c.Text)})
		case llm.ThinkingType:
			if c.Thinking != "" {
				v.Blocks = append(v.Blocks, blockView{Kind: "thinking", Label: "thinking", Text: red(c.Thinking)})
			}
		case llm.ToolCallType:
			v.Blocks = append(v.Blocks, blockView{Kind: "call", Label: red(c.Name), Text: red(indent(c.Arguments))})
		case llm.ImageType:
			v.Blocks = append(v.Blocks, blockView{Kind: "note", Text: "[image " + c.MimeType + "]"})
		}
	}
	return v
}

// indent pretty-prints a tool call's arguments; what is not JSON is shown
// as it is.
func indent(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// page writes the page of v.
func (v *view) page() []byte {
	var w htmlw.Writer
	w.Raw(pageHead)
	w.Text(v.Title)
	w.Raw(" · rally session</title>\n" + pageStyle + "</head><body>\n<h1>")
	w.Text(v.Title)
	w.Raw("</h1>\n<div class=\"meta\">")
	if v.Model != "" {
		w.Text(v.Model)
		w.Raw(" · ")
	}
	w.Int(len(v.Messages))
	w.Raw(" messages · exported by rally</div>\n")
	for _, m := range v.Messages {
		w.Raw(`<section class="msg `)
		w.Attr(m.Class)
		w.Raw("\">\n<div class=\"head\">")
		w.Text(m.Role)
		for _, s := range []string{m.Note, m.When} {
			if s != "" {
				w.Raw(" · ")
				w.Text(s)
			}
		}
		w.Raw("</div>\n")
		for _, b := range m.Blocks {
			w.Raw(`<div class="`)
			w.Attr(b.Kind)
			w.Raw(`">`)
			if b.Label != "" {
				w.Raw(`<div class="label">`)
				w.Text(b.Label)
				w.Raw("</div>")
			}
			w.Raw("<pre>")
			w.Text(b.Text)
			w.Raw("</pre></div>\n")
		}
		w.Raw("</section>\n")
	}
	w.Raw("</body></html>\n")
	return w.Bytes()
}

const pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`

const pageStyle = `<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.3rem;margin-bottom:.2rem}.meta{color:#666;margin-bottom:1.5rem}
.msg{border-left:4px solid #bbb;background:#fff;margin:1rem 0;padding:.6rem 1rem;border-radius:4px}
.user{border-color:#3b82f6}.assistant{border-color:#10b981}.toolResult{border-color:#a855f7}.failed{border-color:#ef4444}
.head{font-size:.8rem;color:#666;text-transform:uppercase;letter-spacing:.04em}
pre{white-space:pre-wrap;word-wrap:break-word;margin:.4rem 0;font:13px/1.45 ui-monospace,monospace}
.text pre{font:15px/1.5 system-ui,sans-serif}.thinking pre{color:#666;font-style:italic}
.call pre,.toolResult pre{background:#f3f3f5;padding:.5rem;border-radius:3px}.error pre{color:#b91c1c}
.label{font-weight:600;font-size:.85rem}
</style>`
