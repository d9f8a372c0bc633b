package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rally-agent/rally/llm"
)

// DefaultEditBytes is the largest file edit changes unless Edit.MaxBytes
// says otherwise.
const DefaultEditBytes = 10 << 20

// Edit is the edit tool: it replaces one exact occurrence of a text in a
// file.
//
// The arguments are path, oldText and newText. The names old_string,
// new_string and file_path are accepted too, because models trained on
// other agents send them; giving both spellings with different values is an
// error rather than a guess.
//
// oldText must occur exactly once: no match and several matches are both
// refused, the latter with the count and line numbers so the model can add
// context. A file with CRLF line ends matches an oldText written with LF
// (read shows such files without the CR), and the replacement gets CRLF
// too. The file is rewritten atomically and keeps its mode. The result is a
// small diff of the changed lines with their numbers.
type Edit struct {
	Dir string
	// MaxBytes is the largest file edit works on; 0 = 10 MiB.
	MaxBytes int64
	// MaxDiffBytes caps the diff in the result; 0 = 50 KiB. Diff lines
	// are cut at DefaultLineLen characters.
	MaxDiffBytes int
	// Deny lists files edit refuses (see Options.Deny).
	Deny []string
}

const editSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit, relative to the working directory, absolute, or starting with ~."},
    "oldText": {"type": "string", "description": "Exact text to replace, including whitespace and indentation. It must occur exactly once in the file: include enough surrounding lines to make it unique."},
    "newText": {"type": "string", "description": "Text to put in its place."}
  },
  "required": ["path", "oldText", "newText"]
}`

// diffLines caps each side of the diff in the result.
const diffLines = 20

// Spec describes edit to the model.
func (e Edit) Spec() llm.Tool {
	return llm.Tool{
		Name: "edit",
		Description: "Replace one exact occurrence of oldText with newText in a file. oldText must match the file exactly " +
			"(whitespace and indentation included) and occur exactly once; read the file first. " +
			"Returns a diff of the changed lines. To create a file or replace all of it, use write.",
		Parameters: json.RawMessage(editSchema),
	}
}

func (e Edit) maxBytes() int64 {
	if e.MaxBytes > 0 {
		return e.MaxBytes
	}
	return DefaultEditBytes
}

// Run makes the edit.
func (e Edit) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path      *string `json:"path"`
		FilePath  *string `json:"file_path"`
		OldText   *string `json:"oldText"`
		OldString *string `json:"old_string"`
		NewText   *string `json:"newText"`
		NewString *string `json:"new_string"`
	}
	if err := decode("edit", args, &a); err != nil {
		return Result{}, err
	}
	p, err := pick("edit", "path", map[string]*string{"path": a.Path, "file_path": a.FilePath}, "path", "file_path")
	if err != nil {
		return Result{}, err
	}
	old, err := pick("edit", "oldText", map[string]*string{"oldText": a.OldText, "old_string": a.OldString}, "oldText", "old_string")
	if err != nil {
		return Result{}, err
	}
	nw, err := pick("edit", "newText", map[string]*string{"newText": a.NewText, "new_string": a.NewString}, "newText", "new_string")
	if err != nil {
		return Result{}, err
	}
	switch {
	case p == nil:
		return Result{}, errors.New("edit: missing required argument \"path\"")
	case old == nil:
		return Result{}, errors.New("edit: missing required argument \"oldText\"")
	case nw == nil:
		return Result{}, errors.New("edit: missing required argument \"newText\"")
	case *old == "":
		return Result{}, errors.New("edit: \"oldText\" is empty; to create a file or replace all of it, use write")
	case *old == *nw:
		return Result{}, errors.New("edit: \"oldText\" and \"newText\" are the same; nothing would change")
	}
	path, err := resolve("edit", e.Dir, *p)
	if err != nil {
		return Result{}, err
	}
	if err := deny(e.Deny).check("edit", path); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("edit: %w", err)
	}

	info, err := os.Stat(path)
	switch {
	case err != nil:
		return Result{}, fsError("edit", path, err)
	case info.IsDir():
		return Result{}, fmt.Errorf("edit: %s is a directory, not a file", path)
	case !info.Mode().IsRegular():
		return Result{}, fmt.Errorf("edit: %s is not a regular file", path)
	case info.Size() > e.maxBytes():
		return Result{}, fmt.Errorf("edit: %s is %s, more than the %s edit limit; use bash (sed, a script) instead",
			path, size(info.Size()), size(e.maxBytes()))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{}, fsError("edit", path, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return Result{}, fmt.Errorf("edit: %s looks like a binary file; edit only changes text files", path)
	}
	content := string(data)
	from, to := *old, *nw

	n := strings.Count(content, from)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(from, "\n") && !strings.Contains(from, "\r\n") {
		from = strings.ReplaceAll(from, "\n", "\r\n")
		to = strings.ReplaceAll(strings.ReplaceAll(to, "\r\n", "\n"), "\n", "\r\n")
		n = strings.Count(content, from)
	}
	switch {
	case n == 0:
		return Result{}, notFound(path, content, *old)
	case n > 1:
		return Result{}, fmt.Errorf("edit: \"oldText\" occurs %d times in %s (%s); it must occur exactly once: "+
			"include more surrounding lines to pick one", n, path, matchLines(content, from, 10))
	}

	i := strings.Index(content, from)
	result := content[:i] + to + content[i+len(from):]
	if err := atomicWrite("edit", path, []byte(result), info.Mode().Perm()); err != nil {
		return Result{}, err
	}
	d, line := diff(content, result, i, len(from), len(to))
	return text(fmt.Sprintf("edited %s\n%s", path, capDiff(d, orDefault(e.MaxDiffBytes, DefaultMaxBytes), path, line))), nil
}

// notFound explains a missing oldText, with a hint when the text is there
// but for whitespace, which is the usual cause.
func notFound(path, content, old string) error {
	msg := fmt.Sprintf("edit: \"oldText\" was not found in %s; it must match the file exactly, "+
		"including whitespace, indentation and line breaks", path)
	if t := strings.TrimSpace(old); t != old && t != "" && strings.Contains(content, t) {
		return errors.New(msg + ". It is found when its leading and trailing whitespace is removed")
	}
	first := ""
	for l := range strings.SplitSeq(old, "\n") {
		if first = strings.TrimSpace(l); first != "" {
			break
		}
	}
	if len(first) >= 3 {
		var at []string
		for n, l := range strings.Split(content, "\n") {
			if strings.TrimSpace(l) == first {
				at = append(at, fmt.Sprint(n+1))
				if len(at) == 5 {
					break
				}
			}
		}
		if len(at) > 0 {
			return fmt.Errorf("%s. Its first line, ignoring indentation, is at line %s; read the file again and copy the text exactly",
				msg, strings.Join(at, ", "))
		}
	}
	return errors.New(msg + ". Read the file again and copy the text from it")
}

// matchLines lists the line numbers where the (non-overlapping) matches of
// s start, at most max of them.
func matchLines(content, s string, max int) string {
	var at []string
	line, pos := 1, 0
	for len(at) < max {
		i := strings.Index(content[pos:], s)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		at = append(at, fmt.Sprint(line))
		line += strings.Count(s, "\n")
		pos += i + len(s)
	}
	more := ""
	if n := strings.Count(content, s); n > len(at) {
		more = ", …"
	}
	return "at lines " + strings.Join(at, ", ") + more
}

// diff shows the lines changed by replacing before[i:i+oldLen] with
// after[i:i+newLen], as a unified-diff hunk without context, with each
// side cut at diffLines lines.
func diff(before, after string, i, oldLen, newLen int) (hunk string, line int) {
	start := strings.LastIndexByte(before[:i], '\n') + 1
	line = strings.Count(before[:start], "\n") + 1
	// Both blocks run from the start of the match's first line to the end
	// of the line the unchanged tail starts on, which is the same text in
	// both files.
	rest := len(before) - (i + oldLen)
	if j := strings.IndexByte(before[i+oldLen:], '\n'); j >= 0 {
		rest = j
	}
	a := strings.Split(before[start:i+oldLen+rest], "\n")
	b := strings.Split(after[start:i+newLen+rest], "\n")

	// Drop the lines the blocks share at either end so only real changes
	// show.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	line += pre

	var sb strings.Builder
	fmt.Fprintf(&sb, "@@ -%s +%s @@", span(line, len(a)), span(line, len(b)))
	side := func(sign string, ls []string) {
		for k, l := range ls {
			if k == diffLines {
				fmt.Fprintf(&sb, "\n%s… %s more", sign, plural(len(ls)-k, "line"))
				break
			}
			l = strings.TrimSuffix(l, "\r")
			if len(l) > DefaultLineLen {
				l = string(trimRune([]byte(l[:DefaultLineLen]))) + fmt.Sprintf(" … [line cut at %d characters]", DefaultLineLen)
			}
			sb.WriteString("\n" + sign + l)
		}
	}
	side("-", a)
	side("+", b)
	return sb.String(), line
}

// capDiff cuts a diff longer than max bytes at a line boundary, with a
// note on where to read the changed lines.
func capDiff(d string, max int, path string, line int) string {
	if len(d) <= max {
		return d
	}
	cut := d[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return fmt.Sprintf("%s\n[diff cut at %s of %s; read %s with offset=%d to see the changed lines]",
		cut, size(int64(len(cut))), size(int64(len(d))), path, line)
}

// span formats a hunk range: "12,3", or "12,0" for none.
func span(line, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", line-1)
	}
	return fmt.Sprintf("%d,%d", line, n)
}
