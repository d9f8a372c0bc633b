package markdown

// style is a set of SGR attributes, written as one escape sequence before
// a run of text and a reset after it. lipgloss's Style.Render does the
// same for a run of text, with a layout pass (padding, borders, widths)
// a run of Markdown never needs: it was most of the renderer's time.
type style struct{ sgr string }

// fg is a 256-colour foreground; the screen renderer turns it into what
// the terminal can show.
func fg(colour string) style { return style{"38;5;" + colour} }

func (s style) bold() style   { return s.with(style{"1"}) }
func (s style) italic() style { return s.with(style{"3"}) }

// with is s with t's attributes added (t's colour wins).
func (s style) with(t style) style {
	switch {
	case s.sgr == "":
		return t
	case t.sgr == "":
		return s
	}
	return style{s.sgr + ";" + t.sgr}
}

func (s style) render(text string) string {
	if s.sgr == "" || text == "" {
		return text
	}
	return "\x1b[" + s.sgr + "m" + text + "\x1b[m"
}
