package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
)

// Read default limits beyond DefaultMaxBytes and DefaultMaxLines.
const (
	DefaultLineLen    = 2000
	DefaultImageBytes = 3 << 20
)

const (
	binarySniffLen     = 8 << 10  // bytes looked at to tell text from binary
	readBufferSize     = 64 << 10 // lines longer than this are read in pieces
	ctxCheckEveryLines = 4096     // how often a long scan looks for an abort
)

// Read is the read tool: it returns a text file's lines, or a small image
// as an image block.
//
// The text comes back as it is in the file, without line numbers: numbered
// lines tempt models to copy the numbers into edit's oldText, and they cost
// tokens. Where the output is cut, a closing notice says which lines were
// shown, of how many, and the offset to continue from. Carriage returns of
// CRLF line ends are dropped; edit matches such files anyway.
type Read struct {
	Dir string
	// MaxLines is the default and largest limit (lines per call); 0 = 2000.
	MaxLines int
	// MaxBytes caps the text returned per call; 0 = 50 KiB.
	MaxBytes int
	// MaxLineLen cuts longer lines (in bytes); 0 = 2000.
	MaxLineLen int
	// MaxImage is the largest image file returned as an image; 0 = 3 MiB,
	// which stays under the common 5 MB limit on base64 image data.
	MaxImage int64
	// Deny lists files read refuses (see Options.Deny).
	Deny []string
}

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read, relative to the working directory, absolute, or starting with ~."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to show. Default 2000."}
  },
  "required": ["path"]
}`

// Spec describes read to the model.
func (r Read) Spec() llm.Tool {
	return llm.Tool{
		Name: "read",
		Description: fmt.Sprintf("Read a text file, or an image (PNG, JPEG, GIF, WebP). Text comes back as it is, "+
			"without line numbers, at most %d lines or %s per call; long lines are cut at %d characters. "+
			"When output is cut, a notice at the end gives the offset to continue from. "+
			"Directories and binary files are refused: use bash (ls, file, xxd) for those.",
			r.maxLines(), size(int64(r.maxBytes())), r.maxLineLen()),
		Parameters: json.RawMessage(readSchema),
	}
}

func (r Read) maxLines() int   { return orDefault(r.MaxLines, DefaultMaxLines) }
func (r Read) maxBytes() int   { return orDefault(r.MaxBytes, DefaultMaxBytes) }
func (r Read) maxLineLen() int { return orDefault(r.MaxLineLen, DefaultLineLen) }
func (r Read) maxImage() int64 {
	if r.MaxImage > 0 {
		return r.MaxImage
	}
	return DefaultImageBytes
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Run reads the file.
func (r Read) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path     *string `json:"path"`
		FilePath *string `json:"file_path"` // the name some models were trained on
		Offset   int     `json:"offset"`
		Limit    int     `json:"limit"`
	}
	if err := decode("read", args, &a); err != nil {
		return Result{}, err
	}
	p, err := pick("read", "path", map[string]*string{"path": a.Path, "file_path": a.FilePath}, "path", "file_path")
	if err != nil {
		return Result{}, err
	}
	if p == nil {
		return Result{}, fmt.Errorf("read: missing required argument \"path\"")
	}
	if a.Offset < 0 {
		return Result{}, fmt.Errorf("read: \"offset\" must be at least 1, not %d", a.Offset)
	}
	if a.Limit < 0 {
		return Result{}, fmt.Errorf("read: \"limit\" must be at least 1, not %d", a.Limit)
	}
	path, err := resolve("read", r.Dir, *p)
	if err != nil {
		return Result{}, err
	}
	if err := deny(r.Deny).check("read", path); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("read: %w", err)
	}

	// Stat before opening: opening a named pipe would block until a
	// writer comes, and a device may never end.
	info, err := os.Stat(path)
	if err != nil {
		return Result{}, fsError("read", path, err)
	}
	if info.IsDir() {
		return Result{}, fmt.Errorf("read: %s is a directory, not a file; use bash (ls) to list it", path)
	}
	if !info.Mode().IsRegular() {
		return Result{}, fmt.Errorf("read: %s is not a regular file (%s)", path, info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fsError("read", path, err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, readBufferSize)
	head, _ := br.Peek(binarySniffLen) // a short file gives a short head and io.EOF
	if mime := imageType(head); mime != "" {
		return r.image(f, path, mime, info.Size())
	}
	if isBinary(head) {
		return Result{}, fmt.Errorf("read: %s looks like a binary file (%s); use bash (file, xxd, strings) to inspect it",
			path, size(info.Size()))
	}
	return r.text(ctx, br, path, a.Offset, a.Limit)
}

// text returns lines [offset, offset+limit) of the file, cut to the byte
// cap, and counts all lines so the notice can say "of N".
func (r Read) text(ctx context.Context, br *bufio.Reader, path string, offset, limit int) (Result, error) {
	if offset == 0 {
		offset = 1
	}
	if limit == 0 || limit > r.maxLines() {
		limit = r.maxLines()
	}
	var (
		out      bytes.Buffer
		n        int  // lines seen
		last     int  // last line shown
		capped   bool // stopped for the byte cap
		cutLines int  // lines cut for length
	)
	for {
		if n%ctxCheckEveryLines == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, fmt.Errorf("read: %w", err)
			}
		}
		want := n+1 >= offset && n+1 < offset+limit && !capped
		line, cut, err := nextLine(br, r.maxLineLen(), want)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("read: %s: %v", path, err)
		}
		n++
		if !want {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		add := len(line) + 1
		if cut {
			add += 64
		}
		if last > 0 && out.Len()+add > r.maxBytes() {
			capped = true
			continue
		}
		if last > 0 {
			out.WriteByte('\n')
		}
		out.Write(bytes.ToValidUTF8(line, []byte("\uFFFD")))
		if cut {
			cutLines++
			fmt.Fprintf(&out, " … [line cut at %d characters]", r.maxLineLen())
		}
		last = n
	}

	switch {
	case n == 0:
		return text(fmt.Sprintf("[%s is empty]", path)), nil
	case offset > n:
		return Result{}, fmt.Errorf("read: offset %d is past the end of %s (%s)", offset, path, plural(n, "line"))
	}
	var notes []string
	if offset > 1 || last < n {
		note := fmt.Sprintf("showing lines %d-%d of %d", offset, last, n)
		if last < n {
			note += fmt.Sprintf("; use offset=%d to read more", last+1)
		}
		if capped {
			note += fmt.Sprintf(" (output limit %s reached)", size(int64(r.maxBytes())))
		}
		notes = append(notes, note)
	}
	if cutLines > 0 {
		notes = append(notes, fmt.Sprintf("%s longer than %d characters cut; use bash to see them whole", plural(cutLines, "line"), r.maxLineLen()))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&out, "\n\n[%s]", strings.Join(notes, "; "))
	}
	return text(out.String()), nil
}

// nextLine reads one line without its "\n". When keep is true it returns
// at most limit bytes of it (cut at a UTF-8 boundary) and reports whether
// it cut; when false it only skips the line. Lines of any length are read
// without ever holding them whole in memory.
func nextLine(br *bufio.Reader, limit int, keep bool) (line []byte, cut bool, err error) {
	read := false
	for {
		frag, err := br.ReadSlice('\n')
		read = read || len(frag) > 0
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		if keep {
			if room := limit - len(line); len(frag) > room {
				cut = true
				frag = frag[:max(room, 0)]
			}
			line = append(line, frag...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && !read:
			return nil, false, io.EOF
		case err != nil && err != io.EOF:
			return nil, false, err
		}
		break
	}
	if cut {
		line = trimRune(line)
	}
	return line, cut, nil
}

// trimRune drops a multi-byte character left incomplete at the end of b.
func trimRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// imageType returns the MIME type of an image the model can see, from the
// file's content rather than its name, so a misnamed file is still right.
func imageType(head []byte) string {
	switch t := http.DetectContentType(head); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// isBinary reports whether the start of a file is not text: it holds a NUL
// byte, or more than 30% of its bytes are not UTF-8 (random data has
// about half). Latin-1 text with a few accents still reads, with
// replacement characters, and a character cut at the end of the head
// cannot tip the balance.
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, w := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && w == 1 {
			bad++
		}
		i += w
	}
	return bad*10 > len(head)*3
}

// image returns the whole file as an image block, if it is small enough.
func (r Read) image(f *os.File, path, mime string, n int64) (Result, error) {
	if n > r.maxImage() {
		return Result{}, fmt.Errorf("read: %s is a %s image of %s, more than the %s limit; make a smaller copy first (e.g. with bash)",
			path, mime, size(n), size(r.maxImage()))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Result{}, fmt.Errorf("read: %s: %v", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, r.maxImage()+1))
	if err != nil {
		return Result{}, fmt.Errorf("read: %s: %v", path, err)
	}
	if int64(len(data)) > r.maxImage() {
		return Result{}, fmt.Errorf("read: %s grew past the %s image limit while being read", path, size(r.maxImage()))
	}
	return Result{Content: []llm.Content{
		llm.Text(fmt.Sprintf("[image %s, %s, %s]", path, mime, size(int64(len(data))))),
		{Type: llm.ImageType, Data: base64.StdEncoding.EncodeToString(data), MimeType: mime},
	}}, nil
}
