package cli

// TestREADMEExamples runs the README's marked shell examples as a newcomer
// would paste them, offline, and compares what they print with the output
// the README shows.
//
// The convention, for README authors:
//
//   - A line `<!-- readme-run -->` right before a fenced block marks it.
//     `<!-- readme-run: fake-llm ARGS -->` first starts `rally fake-llm ARGS`
//     and puts its port where the block says PORT; `<!-- readme-run: env
//     K=V … -->` sets variables the block's text assumes the reader has.
//   - In a block of shell lines (```sh), every line that does not start
//     with "#" is a command (a trailing "\" continues it on the next line),
//     and the "# …" lines right after it are what it prints, stdout and
//     stderr together ("#" alone is an empty line). A "#" line after a
//     blank line or at the top is a comment for the reader. A command with
//     no output lines must only succeed.
//   - In a transcript block, commands start with "$ " and everything up to
//     the next "$ " is their output.
//   - A command's own comment saying "exit N" expects exit status N; any
//     other command must exit 0.
//   - In shown output, "…" stands for any text within the line (a long
//     error, a session id), so the README can stay short and exact, and
//     the block's home directory is written /home/me.
//
// Each block runs in a fresh working directory holding a copy of
// README.md, with its own HOME (so $RALLY_HOME is ~/.rally there), no
// provider keys and TZ=UTC. `go run ./cmd/rally` and `rally` both run this
// test binary as the rally command (TestMain hands it to Main, exactly
// what cmd/rally does), so nothing is built twice. Blocks run in parallel:
// the retry demos wait their real 2 s and 4 s.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/mdfence"
)

type readmeCommand struct {
	line int
	text string
	want []string // nil: output not shown
	code int
}

type readmeBlock struct {
	line int
	fake bool     // start rally fake-llm first
	args string   // its arguments
	env  []string // K=V the block assumes
	cmds []readmeCommand
}

var (
	readmeMarker = regexp.MustCompile(`^<!-- readme-run(?::\s*(fake-llm|env)(.*?))?\s*-->$`)
	readmeExit   = regexp.MustCompile(`#.*\bexit (\d+)`)
)

// readmeBlocks reads the marked blocks of a README.
func readmeBlocks(t *testing.T, doc string) []readmeBlock {
	t.Helper()
	fences := map[int]mdfence.Block{} // by the line of the opening fence
	for _, fb := range mdfence.Blocks(doc) {
		fences[fb.Open] = fb
	}
	var blocks []readmeBlock
	for i, l := range strings.Split(doc, "\n") {
		m := readmeMarker.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		fb, ok := fences[i+1]
		if !ok {
			t.Fatalf("README:%d: a readme-run marker must come right before a fenced block", i+1)
		}
		b := readmeBlock{line: i + 3}
		switch m[1] {
		case "fake-llm":
			b.fake, b.args = true, strings.TrimSpace(m[2])
		case "env":
			b.env = strings.Fields(m[2])
		}
		b.cmds = parseBlock(t, b.line, fb.Lines)
		if len(b.cmds) == 0 {
			t.Fatalf("README:%d: a marked block without a command", b.line)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func parseBlock(t *testing.T, first int, body []string) []readmeCommand {
	transcript := false
	for _, l := range body {
		transcript = transcript || strings.HasPrefix(l, "$ ")
	}
	var cmds []readmeCommand
	cur := func() *readmeCommand {
		if len(cmds) == 0 {
			t.Fatalf("README:%d: output before any command", first)
		}
		return &cmds[len(cmds)-1]
	}
	for n := 0; n < len(body); n++ {
		l := body[n]
		afterBlank := n == 0 || strings.TrimSpace(body[n-1]) == ""
		switch {
		case !transcript && afterBlank && strings.HasPrefix(l, "#"):
			for n+1 < len(body) && strings.HasPrefix(body[n+1], "#") {
				n++ // the rest of the comment
			}
		case transcript && strings.HasPrefix(l, "$ "):
			cmds = append(cmds, readmeCommand{line: first + n, text: l[2:], want: []string{}})
		case transcript:
			c := cur()
			c.want = append(c.want, l)
		case l == "#" || strings.HasPrefix(l, "# "):
			c := cur()
			c.want = append(c.want, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
		case strings.TrimSpace(l) == "":
		default:
			c := readmeCommand{line: first + n, text: l}
			for strings.HasSuffix(c.text, "\\") && n+1 < len(body) {
				n++
				c.text += "\n" + body[n]
			}
			cmds = append(cmds, c)
		}
	}
	for i := range cmds {
		if m := readmeExit.FindStringSubmatch(cmds[i].text); m != nil {
			cmds[i].code, _ = strconv.Atoi(m[1])
		}
		for len(cmds[i].want) > 0 && cmds[i].want[len(cmds[i].want)-1] == "" {
			cmds[i].want = cmds[i].want[:len(cmds[i].want)-1]
		}
	}
	return cmds
}

// matchLine reports whether got is want with each "…" standing for any text.
func matchLine(want, got string) bool {
	parts := strings.Split(want, "…")
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	rest := got[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

func matchOutput(want, got []string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if !matchLine(want[i], got[i]) {
			return false
		}
	}
	return true
}

func TestREADMEExamples(t *testing.T) {
	doc, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, string(doc))
	if len(blocks) < 8 {
		t.Fatalf("%d marked README blocks; the examples lost their markers?", len(blocks))
	}
	bin := readmeBin(t)
	for _, b := range blocks {
		t.Run(fmt.Sprintf("README:%d", b.line), func(t *testing.T) {
			t.Parallel()
			runReadmeBlock(t, b, bin, doc)
		})
	}
}

// readmeBin is a directory holding the rally command the examples run:
// this test binary as rally (see TestMain).
func readmeBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the README examples need bash")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\nRALLY_TEST_AS_MAIN=1 exec %q \"$@\"\n", self)
	if err := os.WriteFile(filepath.Join(bin, "rally"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func runReadmeBlock(t *testing.T, b readmeBlock, bin string, readme []byte) {
	d := readmeDirs{home: t.TempDir(), work: t.TempDir(), tmp: t.TempDir()}
	os.WriteFile(filepath.Join(d.work, "README.md"), readme, 0o644)
	runReadmeBlockIn(t, b, bin, d, true)
}

// readmeDirs are where a block runs: its HOME, its working directory and
// its TMPDIR (what mktemp -d uses), shown as /home/me and /tmp.
type readmeDirs struct{ home, work, tmp string }

// readmeExport is a command `export NAME=…`, which sets NAME for the
// block's later commands as it would in the reader's shell.
var readmeExport = regexp.MustCompile(`^export ([A-Za-z_][A-Za-z0-9_]*)=`)

// runReadmeBlockIn runs b's commands in d; compare checks what they print
// against the README (else only their exit status).
func runReadmeBlockIn(t *testing.T, b readmeBlock, bin string, d readmeDirs, compare bool) {
	home, work := d.home, d.work
	env := append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + d.tmp, "TZ=UTC", "NO_COLOR=1", "LANG=C.UTF-8"}, b.env...)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	port := ""
	if b.fake {
		port = startReadmeFake(t, ctx, filepath.Join(bin, "rally"), b.args, env, work)
	}
	for _, c := range b.cmds {
		script := strings.ReplaceAll(c.text, "go run ./cmd/rally", "rally")
		if port != "" {
			script = strings.ReplaceAll(script, "PORT", port)
		}
		if m := readmeExport.FindStringSubmatch(script); m != nil {
			cmd := exec.CommandContext(ctx, "bash", "-c", script+"\nprintf %s \"$"+m[1]+"\"")
			cmd.Dir, cmd.Env = work, env
			v, err := cmd.Output()
			if err != nil {
				t.Fatalf("README:%d: %s: %v", c.line, c.text, err)
			}
			env = append(env, m[1]+"="+string(v))
			continue
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order rally wrote in
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("README:%d: %v", c.line, err)
		}
		printed := strings.ReplaceAll(strings.ReplaceAll(out.String(), home, "/home/me"), d.tmp, "/tmp")
		got := strings.Split(strings.TrimRight(printed, "\n"), "\n")
		if out.Len() == 0 {
			got = []string{}
		}
		if code != c.code {
			t.Errorf("README:%d: %s\nexit %d, want %d; it printed:\n%s", c.line, c.text, code, c.code, out.String())
			continue
		}
		if compare && c.want != nil && !matchOutput(c.want, got) {
			t.Errorf("README:%d: %s\nprinted:\n%s\nthe README shows:\n%s", c.line, c.text, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// startReadmeFake runs `rally fake-llm ARGS` for a block and returns its port.
func startReadmeFake(t *testing.T, ctx context.Context, rally, args string, env []string, dir string) string {
	cmd := exec.CommandContext(ctx, rally, append([]string{"fake-llm"}, strings.Fields(args)...)...)
	cmd.Env, cmd.Dir = env, dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fake-llm %s: %v", args, err)
	}
	_, addr, ok := strings.Cut(strings.TrimSpace(line), "http://127.0.0.1:")
	if !ok {
		t.Fatalf("fake-llm printed %q first", line)
	}
	return addr
}

func TestReadmeConvention(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"rally: retrying (1/3) in 2s: …", "rally: retrying (1/3) in 2s: 503 overloaded", true},
		{"rally: retrying (1/3) in 2s: …", "rally: retrying (1/3) in 4s: 503 overloaded", false},
		{"a … c … e", "a b c d e", true},
		{"a … c … e", "a b d e", false},
		{"…tail", "head tail", true},
		{"…", "", true},
	} {
		if got := matchLine(tc.want, tc.got); got != tc.ok {
			t.Errorf("matchLine(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
	doc := "<!-- readme-run: env A=1 B=2 -->\n```sh\n# a comment\n# on two lines\nrally a   # exit 2\n# out 1\n#\n# out 2\n\n# comment\nrally b \\\n  --x\n```\n" +
		"<!-- readme-run: fake-llm --preset flaky -->\n```\n$ rally c\nline\n\n$ rally d\n```\n"
	blocks := readmeBlocks(t, doc)
	if len(blocks) != 2 || blocks[0].fake || strings.Join(blocks[0].env, ",") != "A=1,B=2" || !blocks[1].fake || blocks[1].args != "--preset flaky" {
		t.Fatalf("blocks %+v", blocks)
	}
	a := blocks[0].cmds
	if len(a) != 2 || a[0].code != 2 || strings.Join(a[0].want, "|") != "out 1||out 2" || a[1].text != "rally b \\\n  --x" || a[1].want != nil {
		t.Errorf("sh block %+v", a)
	}
	c := blocks[1].cmds
	if len(c) != 2 || strings.Join(c[0].want, "|") != "line" || len(c[1].want) != 0 || c[1].want == nil {
		t.Errorf("transcript block %+v", c)
	}
}
