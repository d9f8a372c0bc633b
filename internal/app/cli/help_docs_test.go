package cli

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpPointsAtRealDocs reads the help of every command and flag: a
// docs/… page it names must exist in the repository, and it must not send
// a user to DESIGN.md, which a user does not have.
func TestHelpPointsAtRealDocs(t *testing.T) {
	docRef := regexp.MustCompile(`docs/[\w.-]+\.md`)
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		texts := []string{c.Short, c.Long, c.Example}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			if strings.Contains(s, "DESIGN") {
				t.Errorf("%s: help mentions DESIGN: %q", c.CommandPath(), s)
			}
			for _, ref := range docRef.FindAllString(s, -1) {
				checked++
				if _, err := os.Stat("../../../" + ref); err != nil {
					t.Errorf("%s: help points at %s, which does not exist", c.CommandPath(), ref)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}))
	if checked == 0 {
		t.Error("no help text names a docs page; the test checks nothing")
	}
}
