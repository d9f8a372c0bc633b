package markdown

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/termsafe"
	"unicode"
)

// TestCommonMark pins what the parser of our own does with the
// constructs the UI meets in answers, beyond TestRenderPlain's layout:
// each case names the rule it holds.
func TestCommonMark(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"setext headings", "Title\n===\n\nSub\n---", "# Title\n\n## Sub"},
		{"ATX closing hashes go", "## a ##", "## a"},
		{"a hash without a space is text", "#a", "#a"},
		{"code span over two lines is one span", "a `b\nc` d", "a b c d"},
		{"code span keeps its escapes", "`a\\*b`", `a\*b`},
		{"unmatched backticks are text", "a ``b` c", "a ``b` c"},
		{"escaped delimiters are text", `\*a\* \_b\_`, "*a* _b_"},
		{"intraword underscores are text", "snake_case_name", "snake_case_name"},
		{"reference link", "see [docs][d]\n\n[d]: https://x.test", "see docs (https://x.test)"},
		{"collapsed and shortcut references", "[Docs][] and [docs]\n\n[docs]: u", "Docs (u) and docs (u)"},
		{"definition over three lines", "[a]\n\n[a]:\n  https://x.test\n  \"T\"", "a (https://x.test)"},
		{"definition over five lines, its label and title over two each", "[multi\nline]:\n/u\n'one\ntwo'\n[Multi line]", "Multi line (/u)"},
		{"a title over four lines", "[t]: /u 'a\nb\nc\nd'\n\n[t]", "t (/u)"},
		{"an underline under definitions only is text as in their paragraph", "[a]: /u\n-\n\n[a]", "-\n\na (/u)"},
		{"definitions in a row, then text", "[a]: /x\n[b]:\n/y (T\nU)\n[a] [b]", "a (/x) b (/y)"},
		{"text after a title: the definition ends at its destination", "[a]: /u\n't' x\n[a]", "'t' x a (/u)"},
		{"unknown reference is text", "[a][b]", "[a][b]"},
		{"inline link with a title", `[a](u "t")`, "a (u)"},
		{"link destination in angle brackets with escapes", `[a](<u v> "t") [b](x\_y)`, "a (u v) b (x_y)"},
		{"a backslash before a line break is no escape in angle brackets", "[a](<b\\\nc>)", "[a](<b\nc>)"},
		{"no link inside a link", "[a [b](c) d](e)", "[a b (c) d](e)"},
		{"image", "![alt *text*](u.png)", "[image: alt text] (u.png)"},
		{"email autolink", "<a@b.test>", "a@b.test"},
		{"a space ends an autolink", "<a b> <http://x.test>", "<a b> http://x.test"},
		// termsafe cleaned the raw text; a reference must not undo it.
		{"a reference to ESC or BEL shows as its picture", "a &#27;]52;c;eA==&#7; b", "a ␛]52;c;eA==␇ b"},
		{"a reference to a bidi override is not one", "a &#x202E;b &rlm;c", termsafe.String("a \u202Eb \u200Fc")},
		{"inline HTML is text, no emphasis inside", `a <span title="*x*">b</span>`, `a <span title="*x*">b</span>`},
		// An end searched for once and not found stays not found for the
		// rest of the text; one found must still end the tag it closes.
		{"inline comments, one unclosed", "x <!-- *a* --> *b* <!-- *c*", "x <!-- *a* --> b <!-- c"},
		{"an unclosed comment before a closed one", "x <!-- *a* <!-- *b* -->", "x <!-- *a* <!-- *b* -->"},
		{"instructions and declarations", "x <? *a* ?> <!X *b*> *c* <? *d*", "x <? *a* ?> <!X *b*> c <? d"},
		{"an unclosed instruction before a comment", "x <? *a* <!-- *b* -->", "x <? a <!-- *b* -->"},
		{"an unclosed attribute value", `x <a b="*c*"> <a b="*d*`, `x <a b="*c*"> <a b="d`},
		{"HTML block with its last line", "<!-- a\nb -->\n\ntext", "<!-- a\nb -->\n\ntext"},
		{"HTML block ends at a blank line", "<div>*a*\n*a*\n</div>\n\n*b*", "<div>*a*\n*a*\n</div>\n\nb"},
		{"entities", "&copy; &#65; &#x42; &#0; &nosuch; AT&T", "© A B \uFFFD &nosuch; AT&T"},
		{"whole entity names, one or two code points", "&notin; &ngE; &semi; &AMP;", "∉ \u2267\u0338 ; &"},
		{"a name that only starts with an entity's is text", "&notit; &copycat; &ampx;", "&notit; &copycat; &ampx;"},
		{"an entity name needs its semicolon", "&copy &amp x", "&copy &amp x"},
		{"entity names are case-sensitive", "&Copy; &COPY;", "&Copy; ©"},
		{"a destination's entities by the same rule", "[a](/p?q=&notit;&amp;r)", "a (/p?q=&notit;&r)"},
		{"CRLF lines", "a\r\nb\r\n\r\nc", "a b\n\nc"},
		{"backslash hard break", "a\\\nb", "a\nb"},
		{"lazy quote continuation", "> a\nb", "│ a b"},
		{"a rule ends a quote", "> a\n---", "│ a\n\n" + strings.Repeat("─", 80)},
		{"nested quote", "> a\n>> b", "│ a\n│\n│ │ b"},
		{"continuation line indented four is text", "a\n    b", "a b"},
		{"unclosed fence runs to the end", "```\nx\n\ny", "  x\n\n  y"},
		{"tilde fence with a longer close", "~~~~\n~~~\n~~~~~", "  ~~~"},
		{"fence inside a list item", "1. a\n\n   ```\n   x\n   ```\n2. b", "1. a\n\n     x\n\n2. b"},
		{"ordered list interrupts a paragraph only from 1", "a\n2. b\n\nc\n1. d", "a 2. b\n\nc\n\n1. d"},
		{"a different bullet starts a new list", "- a\n+ b", "• a\n\n• b"},
		{"ordered list with parens", "1) a\n2) b", "1. a\n2. b"},
		{"lazy list item continuation", "- a\nb", "• a b"},
		{"star rule is not a list", "* a\n* * *", "• a\n\n" + strings.Repeat("─", 80)},
		{"empty item", "-\n- b", "•\n• b"},
		{"an empty item ends at a blank line, its list goes on", "* a\n*\n\n* c", "• a\n\n•\n\n• c"},
		{"a list loose from an empty item's blank line", "-\n\n- b\n- c", "•\n\n• b\n\n• c"},
		{"table cells are inline only", "| a | b |\n|---|---|\n| - | >=1 |", "a │ b\n──┼────\n- │ >=1"},
		{"escaped pipe stays in its cell", "| a |\n|---|\n| x \\| y |", "a\n─────\nx | y"},
		{"table in a tight list", "- | a |\n  |---|\n  | b |", "• a\n  ─\n  b"},
		{"NUL becomes the replacement character", "a\x00b", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(80, Plain).Render(tt.src); got != tt.want {
				t.Fatalf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestLazyContinuation: a line without its container's marker (a
// quote's ">", an item's indent) stays in the container only when it
// would be a paragraph's continuation there, and only when a paragraph
// is open at the end of the container's content (CommonMark's lazy
// continuation line). A line that opens a block where the container is
// ends it: a fence, a list item, a rule, a heading, an HTML block.
func TestLazyContinuation(t *testing.T) {
	rule := strings.Repeat("─", 80)
	tests := []struct{ name, src, want string }{
		{"a text line is lazy", "> a\nb", "│ a b"},
		{"a fence is not", "> a\n```\nb", "│ a\n\n  b"},
		{"a bullet item is not", "> a\n- b", "│ a\n\n• b"},
		{"an empty item is not", "> a\n-", "│ a\n\n•"},
		{"an ordered item not from 1 is not, though it cannot interrupt a paragraph", "> a\n2. b", "│ a\n\n2. b"},
		{"a rule is not", "> a\n***", "│ a\n\n" + rule},
		{"a dash rule is not, though it would underline the paragraph", "> a\n---", "│ a\n\n" + rule},
		{"an ATX heading is not", "> a\n# h", "│ a\n\n# h"},
		{"an equals underline is text: the paragraph it would underline is inside", "> a\n===", "│ a ==="},
		{"an HTML block is not", "> a\n<div>", "│ a\n\n<div>"},
		{"a tag alone on its line is, as it cannot interrupt a paragraph", "> a\n<span>", "│ a <span>"},
		{"a line indented four is", "> a\n    - b", "│ a - b"},
		{"none after an HTML block", "> <div>\nb", "│ <div>\n\nb"},
		{"none after a setext heading", "> a\n> ===\nb", "│ # a\n\nb"},
		{"none after an empty item", "> -\nb", "│ •\n\nb"},
		{"none after a blank line", "> a\n>\nb", "│ a\n\nb"},
		{"none inside a fence", "> ```\nb", "│\n\nb"},
		{"none after indented code, though indented four", ">     a\n    b", "│   a\n\n  b"},
		{"none inside a fence in an item in a quote", "> - ```\n  b", "│ •\n\nb"},
		{"one after a continuation line indented four", "> a\n>     b\nc", "│ a b c"},
		{"one indented four after list items indented less", "- a\n - b\n  - c\n   - d\n    - e", "• a\n• b\n• c\n• d - e"},
		{"one for a nested quote", "> > a\nb", "│ │ a b"},
		{"one for a quote in an item", "- a\n  > b\nc", "• a\n  │ b c"},
		{"one for an item in a quote", "> - a\n  b", "│ • a b"},
		{"marked lines after one", "> a\nb\n> c", "│ a b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(80, Plain).Render(tt.src); got != tt.want {
				t.Fatalf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestEmphasis checks CommonMark's delimiter rules by the styles they
// give: which runs open and close, and which are left as text.
func TestEmphasis(t *testing.T) {
	r := New(80, Dark)
	tx := r.st.text
	b, i := tx.bold().render, tx.italic().render
	tests := []struct{ name, src, want string }{
		{"strong", "**a**", b("a")},
		{"emphasis", "*a*", i("a")},
		{"underscore emphasis", "_a_", i("a")},
		{"strong inside emphasis", "*a **b** c*", i("a ") + tx.italic().bold().render("b") + i(" c")},
		{"triple is both", "***a***", tx.italic().bold().render("a")},
		{"unbalanced keeps the extra star", "**a*", "*" + i("a")},
		{"star inside a word", "foo*bar*", "foo" + i("bar")},
		{"spaces around a star are text", "a * b *", "a * b *"},
		{"underscore inside a word is text", "a_b_c", "a_b_c"},
		{"rule of three", "*a**b*", i("a**b")},
		{"punctuation before the closer", "**a.** b", b("a.") + " b"},
		{"punctuation before a closer before a letter is text", "**a.**b", "**a.**b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Render(tt.src); got != tt.want {
				t.Fatalf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestDeepNesting: quotes and lists nest to maxDepth, and the markers
// past it are text, so a hostile answer cannot make the work grow as
// the square of its length.
func TestDeepNesting(t *testing.T) {
	for _, src := range []string{strings.Repeat(">", 5000) + " x", strings.Repeat("- ", 5000) + "x"} {
		out := New(0, Plain).Render(src)
		if n := strings.Count(out, "│") + strings.Count(out, "•"); n != maxDepth {
			t.Errorf("%.10q…: %d levels rendered, want %d", src, n, maxDepth)
		}
		if !strings.HasSuffix(out, "x") {
			t.Errorf("%.10q…: the text is lost: %.40q", src, out[max(0, len(out)-40):])
		}
	}
}

// FuzzParse: whatever the bytes, Render returns, and the output has
// every letter of the input, in order, and no other (the markup goes,
// the text stays). That is checked only where the input has none of the
// constructs whose text is not shown as written: character references
// (&amp; shows as &), fence info strings, links and images (their
// destinations and titles) and reference definitions.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"# a\n\nb *c* **d** `e`", "> q\nlazy\n\n- x\n  - y\n1. z", "| a | b |\n|---|---|\n| c \\| d | e |",
		"<div>\nhtml\n</div>", "a\\\nb  \nc", "***a** b*", "[a]: u\n[a] [b](c)", "```go\nx\n```",
		"    code\n\ttab", "- \n-\n  a", "<!-- c\n-->", "<http://x> <y@z>", "a\r\nb\x00", "A*A*0",
	} {
		f.Add(s)
	}
	dark, plain := New(30, Dark), New(0, Plain)
	f.Fuzz(func(t *testing.T, s string) {
		dark.Render(s)
		out := plain.Render(s)
		for _, skip := range []string{"&", "```", "~~~", "](", "]:"} {
			if strings.Contains(s, skip) {
				return
			}
		}
		if got, want := letters(out), letters(s); got != want {
			t.Fatalf("Render(%q) = %q: letters %q, want %q", s, out, got, want)
		}
	})
}

// letters is s's letters (numbers may change: an ordered list counts
// from its first).
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) {
			return r
		}
		return -1
	}, s)
}
