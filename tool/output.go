package tool

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultSpillBytes bounds the file that keeps a bash command's whole
// output once it outgrew the caps: a command printing without end must
// not fill the disk.
const DefaultSpillBytes = 64 << 20

// capture is the io.Writer bash's output goes to. It keeps the last max
// bytes in memory and counts bytes and lines, so a command printing
// gigabytes costs bounded memory; once the output outgrows the caps it
// also saves all of it, up to spillMax bytes, to a file that the model can
// page through with read (the result names the file and line numbers).
type capture struct {
	mu       sync.Mutex // exec writes from one goroutine, but Wait may return before it stops (WaitDelay)
	max      int
	maxLines int
	dir      string // for the saved file; "" is os.TempDir()
	spillMax int64

	buf   []byte // everything, until the caps are passed; then the tail
	total int64
	nl    int64 // newlines written
	last  byte

	file    *os.File
	saved   int64
	fileErr error
	closed  bool
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	c.total += int64(len(p))
	c.nl += int64(bytes.Count(p, []byte("\n")))
	c.last = p[len(p)-1]
	if c.file == nil && c.fileErr == nil && !c.closed && (c.total > int64(c.max) || c.nl >= int64(c.maxLines)) {
		// buf still holds every byte before p: the caps were not passed.
		c.file, c.fileErr = os.CreateTemp(c.dir, "rally-bash-*.out")
		c.save(c.buf)
	}
	c.save(p)
	if len(p) >= c.max {
		c.buf = append(c.buf[:0], p[len(p)-c.max:]...)
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	// Trim only when twice over, so trimming is amortised over writes.
	if len(c.buf) > 2*c.max {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-c.max:]...)
	}
	return len(p), nil
}

// save appends p to the file, if there is one and it has room.
func (c *capture) save(p []byte) {
	if c.file == nil || c.closed {
		return
	}
	n := min(int64(len(p)), c.spillMax-c.saved)
	if n <= 0 {
		return
	}
	w, err := c.file.Write(p[:n])
	c.saved += int64(w)
	if err != nil && c.fileErr == nil {
		c.fileErr = err
	}
}

// close closes the saved file, and removes it when the output fits after
// all (exactly maxLines lines); later writes only count.
func (c *capture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.file == nil {
		return
	}
	if err := c.file.Close(); err != nil && c.fileErr == nil {
		c.fileErr = err
	}
	if c.total <= int64(c.max) && c.lines() <= int64(c.maxLines) {
		os.Remove(c.file.Name())
		c.file = nil
	}
}

// lines counts the lines written, a last one without "\n" included.
func (c *capture) lines() int64 {
	if c.total > 0 && c.last != '\n' {
		return c.nl + 1
	}
	return c.nl
}

// text returns the output kept for the model, at most max bytes and
// maxLines lines from its end, and, when that is not all of it, a note
// saying what was cut and where the whole output is. A cut output starts
// at a line boundary when one is near, so the model does not read half a
// line as a whole one.
func (c *capture) text() (body, note string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if len(b) > c.max {
		b = b[len(b)-c.max:]
	}
	if int64(len(b)) < c.total {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < 1024 && i+1 < len(b) {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	if n := lineCount(b); n > c.maxLines {
		b = b[lineStart(b, n-c.maxLines):]
	}
	body = strings.ToValidUTF8(string(b), "\uFFFD")
	if int64(len(b)) == c.total {
		return body, ""
	}
	lines := c.lines()
	shown := lineCount(b)
	first := lines - int64(shown) + 1
	var sb strings.Builder
	fmt.Fprintf(&sb, "[output cut: it was %s in %s; showing the last %s (%s), from line %d",
		size(c.total), plural64(lines, "line"), plural(shown, "line"), size(int64(len(b))), first)
	switch {
	case c.file != nil && c.saved > 0:
		fmt.Fprintf(&sb, ". The whole output is saved in %s: read it with offset and limit (the part shown here starts at offset %d)",
			c.file.Name(), first)
		if c.saved < c.total {
			fmt.Fprintf(&sb, "; only its first %s were saved", size(c.saved))
		}
	case c.fileErr != nil:
		fmt.Fprintf(&sb, ". The earlier part is lost: it could not be saved to a file (%v)", unwrapPath(c.fileErr))
	}
	sb.WriteString("]")
	return body, sb.String()
}

// lineCount counts the lines of b, a last line without "\n" included.
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// lineStart returns the offset of line k (0-based) of b.
func lineStart(b []byte, k int) int {
	off := 0
	for range k {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return len(b)
		}
		off += i + 1
	}
	return off
}

func plural64(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
