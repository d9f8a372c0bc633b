// Command testcount reads `go test -json` on stdin and writes what a plain
// `go test` run shows (the ok/FAIL line of every package, the output of
// failing tests, build errors), then how many tests skipped and why, so a
// test that quietly skips on this machine is seen. Its exit status is 1
// when a test or package failed; scripts/test.sh runs it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

func main() {
	failed, err := count(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcount:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// count copies the run from in to out and reports whether anything failed.
func count(in io.Reader, out io.Writer) (failed bool, err error) {
	held := map[key][]string{} // a running test's output, shown if it fails
	var skipped []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // not test2json: say it as it came
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			io.WriteString(out, e.Output)
		case e.Test == "":
			// The package's own lines: "ok", "FAIL", a panic outside any
			// test. -json implies -v, whose lone "PASS" plain go test omits.
			if e.Action == "output" && e.Output != "PASS\n" {
				io.WriteString(out, e.Output)
			}
			if e.Action == "fail" {
				failed = true
			}
		case e.Action == "output":
			held[k] = append(held[k], e.Output)
		case e.Action == "fail":
			failed = true
			for _, o := range held[k] {
				if !strings.HasPrefix(o, "=== ") {
					io.WriteString(out, o)
				}
			}
			delete(held, k)
		case e.Action == "skip":
			skipped = append(skipped, e.Package+" "+e.Test+": "+reason(held[k]))
			delete(held, k)
		case e.Action == "pass":
			delete(held, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if len(skipped) == 1 {
		fmt.Fprintln(out, "1 test skipped")
	} else {
		fmt.Fprintf(out, "%d tests skipped\n", len(skipped))
	}
	for _, s := range skipped {
		fmt.Fprintln(out, "  skipped", s)
	}
	return failed, nil
}

// reason is what a skipped test logged: the line t.Skip wrote.
func reason(lines []string) string {
	var why []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- SKIP") {
			why = append(why, t)
		}
	}
	if len(why) == 0 {
		return "(no reason given)"
	}
	return strings.Join(why, " ")
}
