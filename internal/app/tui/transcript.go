package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rally-agent/rally/internal/markdown"
	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
)

type blockKind int

const (
	kUser blockKind = iota
	kAssistant
	kThinking
	kTool
	kInfo   // slash command output, dim
	kNotice // retry, abort and compaction lines
	kError
)

// previewLines is how much of a tool result shows until ctrl+o expands it.
const previewLines = 6

type toolCall struct {
	id, name, args string
	result         string
	done, isError  bool
}

// block is one entry of the transcript with its rendering cached per
// width, so a frame only renders what changed.
type block struct {
	kind blockKind
	text string
	tool *toolCall
	// live is an assistant block still streaming: plain wrapped text,
	// Markdown once the message ends.
	live bool
	// msg is the assistant message the block belongs to (for discards).
	msg int
	// head is the wrapped text of a live block up to its last newline
	// (headLen bytes): lines above a newline never change as text streams
	// in, so a delta re-wraps only the paragraph it lands in.
	head    []string
	headLen int

	width int
	lines []string
}

// transcript is the list of blocks and the scroll position.
type transcript struct {
	st     *styles
	blocks []block
	dark   bool
	// expanded kinds (thinking, tool results) show in full.
	expanded map[blockKind]bool
	offset   int // lines scrolled up from the bottom
	msgSeq   int // the current assistant message
	md       *markdown.Renderer
	mdWidth  int
	mdDark   bool
}

func newTranscript(st *styles) transcript {
	return transcript{st: st, dark: true, expanded: map[blockKind]bool{}}
}

func (t *transcript) reset() {
	t.blocks, t.offset = nil, 0
}

// add appends a block. Its text, like a delta's and a tool's name, args
// and result, came from a model, a tool or a session file: termsafe makes
// the controls in it visible (the screen renderer drops most escape
// sequences but would pass bidi overrides such as U+202E).
func (t *transcript) add(b block) {
	b.text = termsafe.String(b.text)
	if c := b.tool; c != nil {
		c.name, c.args, c.result = termsafe.String(c.name), termsafe.String(c.args), termsafe.String(c.result)
	}
	t.blocks = append(t.blocks, b)
}

// follow scrolls back to the bottom.
func (t *transcript) follow() { t.offset = 0 }

func (t *transcript) scroll(n int) { t.offset = max(0, t.offset+n) }

func (t *transcript) setDark(dark bool) {
	if dark != t.dark {
		t.dark = dark
		t.invalidate(func(b *block) bool { return b.kind == kAssistant && !b.live })
	}
}

func (t *transcript) toggle(k blockKind) {
	t.expanded[k] = !t.expanded[k]
	t.invalidate(func(b *block) bool { return b.kind == k })
}

func (t *transcript) invalidate(which func(*block) bool) {
	for i := range t.blocks {
		if which(&t.blocks[i]) {
			t.blocks[i].lines = nil
		}
	}
}

// load shows the messages of a resumed session.
func (t *transcript) load(msgs []llm.Message) {
	for _, m := range msgs {
		switch m.Role {
		case llm.User:
			t.add(block{kind: kUser, text: m.TextOf()})
		case llm.Assistant:
			t.startAssistant()
			t.endAssistant(m)
		}
	}
}

func (t *transcript) startAssistant() { t.msgSeq++ }

// delta appends streamed text or thinking to the current message.
func (t *transcript) delta(text string, thinking bool) {
	kind := kAssistant
	if thinking {
		kind = kThinking
	}
	if n := len(t.blocks); n > 0 {
		if b := &t.blocks[n-1]; b.msg == t.msgSeq && b.live && b.kind == kind {
			b.text += termsafe.String(text)
			b.lines = nil
			return
		}
	}
	t.add(block{kind: kind, text: text, live: true, msg: t.msgSeq})
}

// endAssistant replaces the streamed blocks of the current message with
// its final content: Markdown text and collapsible thinking. A failed or
// aborted message keeps what was streamed, as plain text.
func (t *transcript) endAssistant(m llm.Message) {
	if m.StopReason == llm.Error || m.StopReason == llm.Aborted {
		for i := range t.blocks {
			if t.blocks[i].msg == t.msgSeq {
				t.blocks[i].live = false
				t.blocks[i].lines = nil
			}
		}
		return
	}
	t.drop(t.msgSeq)
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			if strings.TrimSpace(c.Text) != "" {
				t.add(block{kind: kAssistant, text: c.Text, msg: t.msgSeq})
			}
		case llm.ThinkingType:
			if strings.TrimSpace(c.Thinking) != "" {
				t.add(block{kind: kThinking, text: c.Thinking, msg: t.msgSeq})
			}
		}
	}
}

// discard takes the current message's text off the screen (a retry starts
// it over).
func (t *transcript) discard() { t.drop(t.msgSeq) }

func (t *transcript) drop(msg int) {
	if msg == 0 {
		return
	}
	out := t.blocks[:0]
	for _, b := range t.blocks {
		if (b.kind == kAssistant || b.kind == kThinking) && b.msg == msg {
			continue
		}
		out = append(out, b)
	}
	t.blocks = out
}

func (t *transcript) toolEnd(id, result string, isError bool) {
	for i := len(t.blocks) - 1; i >= 0; i-- {
		if b := &t.blocks[i]; b.tool != nil && b.tool.id == id && !b.tool.done {
			b.tool.result, b.tool.isError, b.tool.done = termsafe.String(result), isError, true
			b.lines = nil
			return
		}
	}
}

// window returns the last h lines of the transcript at width w (fewer if
// it is shorter), scrolled up by the offset. Only blocks that reach the
// window are rendered.
func (t *transcript) window(w, h int) []string {
	if h <= 0 {
		return nil
	}
	need := h + t.offset
	var rev [][]string
	n := 0
	for i := len(t.blocks) - 1; i >= 0 && n < need; i-- {
		ls := t.render(&t.blocks[i], w)
		// Only the part that can reach the window: a long answer
		// streaming at the bottom is not copied whole for every frame.
		ls = ls[max(0, len(ls)-(need-n)):]
		rev = append(rev, ls)
		n += len(ls) + 1 // a blank line between blocks
	}
	all := make([]string, 0, n)
	for i := len(rev) - 1; i >= 0; i-- {
		if len(all) > 0 {
			all = append(all, "")
		}
		all = append(all, rev[i]...)
	}
	if t.offset > max(0, len(all)-h) {
		t.offset = max(0, len(all)-h)
	}
	end := len(all) - t.offset
	start := max(0, end-h)
	return all[start:end]
}

// text is the whole conversation at width w, for the terminal's
// scrollback once the UI has left the screen: every block but the
// welcome line, which only says how to use the UI that is gone.
func (t *transcript) text(w int) string {
	var b strings.Builder
	for i := range t.blocks {
		if bl := &t.blocks[i]; bl.kind == kInfo && bl.text == welcome {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		for _, l := range t.render(&t.blocks[i], w) {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func (t *transcript) render(b *block, w int) []string {
	if b.lines != nil && b.width == w {
		return b.lines
	}
	if b.live && b.kind == kAssistant {
		return t.renderLive(b, w)
	}
	b.width = w
	b.lines = strings.Split(t.renderBlock(b, w), "\n")
	return b.lines
}

// renderLive wraps a streaming answer: the finished paragraphs from the
// cache, the last one anew.
func (t *transcript) renderLive(b *block, w int) []string {
	if b.width != w {
		b.head, b.headLen, b.width = nil, 0, w
	}
	if nl := strings.LastIndexByte(b.text, '\n'); nl >= b.headLen {
		b.head = append(b.head, strings.Split(wrap(b.text[b.headLen:nl], w), "\n")...)
		b.headLen = nl + 1
	}
	tail := strings.Split(wrap(b.text[b.headLen:], w), "\n")
	b.lines = append(b.head[:len(b.head):len(b.head)], tail...)
	return b.lines
}

func (t *transcript) renderBlock(b *block, w int) string {
	st := t.st
	switch b.kind {
	case kUser:
		// Tabs go to their stops first: lipgloss wraps a tab as no cell and
		// then draws it as four.
		return st.user.Render(wrap(expandTabs("› "+b.text), w))
	case kAssistant:
		if b.live {
			return wrap(b.text, w)
		}
		return t.markdown(b.text, w)
	case kThinking:
		text := b.text
		if !t.expanded[kThinking] && !b.live {
			lines := strings.Split(strings.TrimSpace(text), "\n")
			text = "thinking: " + clipLine(lines[0], w-30)
			if len(lines) > 1 {
				text += " (+" + itoa(len(lines)-1) + " lines, ctrl+t to expand)"
			} else {
				text += " (ctrl+t to expand)"
			}
		}
		return st.thinking.Render(wrap(text, w))
	case kTool:
		return t.renderTool(b.tool, w)
	case kNotice:
		return st.notice.Render(wrap(b.text, w))
	case kError:
		return st.err.Render(wrap(b.text, w))
	}
	return st.info.Render(wrap(b.text, w))
}

func (t *transcript) renderTool(c *toolCall, w int) string {
	st := t.st
	head := st.toolName.Render("→ "+c.name) + " " + st.info.Render(clipLine(c.args, w-len(c.name)-3))
	if !c.done {
		return head
	}
	res := strings.TrimRight(c.result, "\n")
	lines := strings.Split(res, "\n")
	if res == "" {
		lines = nil
	}
	more := 0
	if !t.expanded[kTool] && len(lines) > previewLines {
		more = len(lines) - previewLines
		lines = lines[:previewLines]
	}
	style := st.result
	if c.isError {
		style = st.err
	}
	var b strings.Builder
	b.WriteString(head)
	for _, l := range lines {
		b.WriteString("\n")
		b.WriteString(style.Render(wrap("  "+expandTabs(l), w)))
	}
	if more > 0 {
		b.WriteString("\n" + st.info.Render("  … "+itoa(more)+" more lines (ctrl+o to expand)"))
	}
	return b.String()
}

// markdown renders finished assistant text. The renderer is built on
// the first answer that needs it (and again when the width or the
// background changes), so a process that never shows one never pays
// for it.
func (t *transcript) markdown(text string, w int) string {
	if t.md == nil || t.mdWidth != w || t.mdDark != t.dark {
		theme := markdown.Dark
		switch {
		case t.st.noColor:
			theme = markdown.Plain
		case !t.dark:
			theme = markdown.Light
		}
		t.md, t.mdWidth, t.mdDark = markdown.New(w, theme), w, t.dark
	}
	return t.md.Render(text)
}

// tabStop is the terminal's: a tab moves to the next multiple of 8.
const tabStop = 8

// tabSpan is how many cells a tab at column col takes: the rule of the
// transcript and the editor both.
func tabSpan(col int) int { return tabStop - col%tabStop }

// expandTabs replaces each tab of text with the spaces that reach the
// next tab stop of its line, as the terminal would have shown it, so that
// columns (ls -l, a TSV) stay aligned; a wrapper that counts a tab as a
// fixed run of spaces breaks them.
func expandTabs(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	var b strings.Builder
	col := 0
	for _, r := range text {
		switch r {
		case '\t':
			n := tabSpan(col)
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case '\n':
			col = 0
		}
		b.WriteRune(r)
		col += ansi.StringWidth(string(r))
	}
	return b.String()
}

// wrap breaks s at width w (words first, long words hard).
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	return lipgloss.Wrap(s, w, " ")
}

func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	n = max(n, 10)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
