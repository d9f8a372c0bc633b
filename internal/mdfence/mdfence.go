// Package mdfence reads the fenced code blocks of a Markdown document,
// for the tests that run or check the examples of the README and the
// docs: one reading of fences (a line opening with ``` and its info
// string, closed by a line that is ``` alone) instead of one per test.
package mdfence

import "strings"

// Block is one fenced block.
type Block struct {
	// Lang is the info string after the opening fence ("sh", "json", "").
	Lang string
	// Lines are the lines between the fences.
	Lines []string
	// Open is the 0-based index of the opening fence among the
	// document's lines: its body is lines Open+1 to Open+len(Lines).
	Open int
	// Before is the line before the opening fence, trimmed (a marker
	// comment such as <!-- readme-run -->); "" for none.
	Before string
}

// Text is the block's body, every line ending in "\n".
func (b Block) Text() string {
	if len(b.Lines) == 0 {
		return ""
	}
	return strings.Join(b.Lines, "\n") + "\n"
}

// Blocks returns the fenced blocks of doc in order; a block left open
// runs to the end of doc.
func Blocks(doc string) []Block {
	lines := strings.Split(doc, "\n")
	var out []Block
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := Block{Lang: strings.TrimSpace(info), Open: i}
		if i > 0 {
			b.Before = strings.TrimSpace(lines[i-1])
		}
		for i++; i < len(lines) && strings.TrimRight(lines[i], " \t\r") != "```"; i++ {
			b.Lines = append(b.Lines, lines[i])
		}
		out = append(out, b)
	}
	return out
}

// Texts returns the bodies (Block.Text) of doc's blocks whose info string
// is lang.
func Texts(doc, lang string) []string {
	var out []string
	for _, b := range Blocks(doc) {
		if b.Lang == lang {
			out = append(out, b.Text())
		}
	}
	return out
}
