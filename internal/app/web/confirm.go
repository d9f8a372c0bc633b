package web

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/rally-agent/rally/settings"
)

// A change of hooks makes rally run commands on the next run, so the
// console's credential alone (a cookie another local process might have
// got hold of) must not be enough to make one. The save asks for a
// one-time code that rally web prints on its own terminal, which only the
// person who started it sees. A code is good for one save; a wrong one is
// thrown away and a new one printed, so guessing costs a printed line per
// try against 8 characters of a 31-letter alphabet (about 40 bits).

// confirmer holds the one code in force.
type confirmer struct {
	term io.Writer
	mu   sync.Mutex
	code string
}

func newConfirmer(term io.Writer) *confirmer { return &confirmer{term: term} }

// confirmAlphabet leaves out letters that read alike (0/O, 1/I/L).
const confirmAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// check reports whether code is the one in force, and uses it up either
// way. On failure a new code is printed; with no terminal there is none
// and it fails always.
func (c *confirmer) check(code string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	code = strings.ToUpper(strings.TrimSpace(code))
	good := c.code != "" && code != "" && subtle.ConstantTimeCompare([]byte(code), []byte(c.code)) == 1
	c.code = ""
	if !good && c.term != nil {
		b := make([]byte, 8)
		rand.Read(b)
		for i := range b {
			b[i] = confirmAlphabet[int(b[i])%len(confirmAlphabet)]
		}
		c.code = string(b)
		fmt.Fprintf(c.term, "rally web: a change of hooks was asked for from the console; to allow it, type this code there: %s\n", c.code)
	}
	return good
}

// hooksJSON is the hooks of f as compact JSON, "" if it has none.
func hooksJSON(f *settings.File) string {
	raw, ok := f.Get("hooks")
	if !ok {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// hooksRefused is said when a save would change hooks without the code.
func (c *confirmer) refused() string {
	if c.term == nil {
		return "hooks run commands, so this console does not change them: use rally settings set hooks …; nothing was written"
	}
	return "hooks run commands on your next run: type the code that rally web just printed in its terminal into the confirmation box, then save again; nothing was written"
}
