package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// readmeWritesSettings is a command that writes a settings or
	// credentials file.
	readmeWritesSettings = regexp.MustCompile(`rally (settings (set|unset)|auth (add|remove))\b`)
	// readmeWritesHere is a command that writes a file in the working
	// directory: a redirect or a --session to a relative path.
	readmeWritesHere = regexp.MustCompile(`(^|[^0-9&>])>\s*[^\s&/>]|--session\s+[^\s/$"-]`)
	// readmeThrowAway points RALLY_HOME at a throw-away directory.
	readmeThrowAway = regexp.MustCompile(`^export RALLY_HOME=\$\(mktemp -d\)`)
)

// TestREADMELeavesNoTrace: the README's examples, pasted in order into a
// shell in the rally checkout, leave the user's own ~/.rally and the
// checkout as they were. They wrote retry.maxRetries 5, fallback models
// and fleet.redis redis://redis.internal:6379/0 into ~/.rally/settings.json
// (every later run then warned that Redis was not answering), fake keys
// into ~/.rally/auth.json, and left AGENTS.md, work.jsonl and .rally/
// untracked in the checkout.
//
// Every example that writes settings or credentials first points
// RALLY_HOME at a throw-away directory; the runnable ones run here, in
// order, in one HOME and one copy of the checkout, and then $HOME/.rally
// must not exist while the throw-away homes hold what they wrote. The
// examples that write into the working directory run next, and git must
// then see nothing untracked.
func TestREADMELeavesNoTrace(t *testing.T) {
	doc, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	checkShBlocks(t, string(doc))

	var settingsBlocks, hereBlocks []readmeBlock
	for _, b := range readmeBlocks(t, string(doc)) {
		switch {
		case blockMatches(b, readmeWritesSettings):
			settingsBlocks = append(settingsBlocks, b)
		case blockMatches(b, readmeWritesHere):
			hereBlocks = append(hereBlocks, b)
		}
	}
	if len(settingsBlocks) < 4 || len(hereBlocks) < 2 {
		t.Fatalf("%d runnable blocks write settings and %d write files here; the patterns no longer find the examples", len(settingsBlocks), len(hereBlocks))
	}
	bin := readmeBin(t)
	d := readmeDirs{home: t.TempDir(), work: checkoutCopy(t, doc), tmp: t.TempDir()}
	for _, b := range settingsBlocks {
		runReadmeBlockIn(t, b, bin, d, false)
	}
	if _, err := os.Lstat(filepath.Join(d.home, ".rally")); !os.IsNotExist(err) {
		t.Errorf("the examples that write settings wrote into $HOME/.rally (%v):\n%s", err, tree(t, filepath.Join(d.home, ".rally")))
	}
	written := tree(t, d.tmp)
	for _, f := range []string{"/settings.json", "/auth.json"} {
		if !strings.Contains(written, f+"\n") {
			t.Errorf("no throw-away RALLY_HOME got a %s; under TMPDIR:\n%s", f[1:], written)
		}
	}
	for _, b := range hereBlocks {
		runReadmeBlockIn(t, b, bin, d, false)
	}
	if out := git(t, d.work, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("the examples left the checkout changed:\n%s", out)
	}
	// The hooks demo needs notify-send, so it is not run here; what it
	// leaves in the checkout must be ignored all the same.
	for _, f := range []string{".rally/settings.json", "prompts.csv"} {
		cmd := exec.Command("git", "check-ignore", "-q", f)
		cmd.Dir = d.work
		if err := cmd.Run(); err != nil {
			t.Errorf("the hooks demo leaves %s in the checkout, and .gitignore does not cover it (%v)", f, err)
		}
	}
}

// checkShBlocks: in every shell block of the README, run or not, a command
// that writes settings or credentials comes after the line that points
// RALLY_HOME at a throw-away directory.
func checkShBlocks(t *testing.T, doc string) {
	t.Helper()
	in, throwAway := false, false
	for i, l := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in, throwAway = l == "```sh" && !in, false
		case !in || strings.HasPrefix(l, "#"):
		case readmeThrowAway.MatchString(l):
			throwAway = true
		case readmeWritesSettings.MatchString(l) && !throwAway:
			t.Errorf("README:%d writes your settings without a throw-away RALLY_HOME first: %s", i+1, l)
		}
	}
}

func blockMatches(b readmeBlock, re *regexp.Regexp) bool {
	for _, c := range b.cmds {
		if re.MatchString(c.text) {
			return true
		}
	}
	return false
}

// checkoutCopy is a git repository holding what the examples read from
// the rally checkout (README.md, .gitignore, schema.json, examples/),
// with all of it committed.
func checkoutCopy(t *testing.T, readme []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS("../../../examples")); err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{".gitignore": "../../../.gitignore", "schema.json": "../../../schema.json"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), readme, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=readme", "-c", "user.email=readme@example.com", "commit", "-q", "-m", "checkout")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// tree lists the files under root, one path a line.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b.WriteString(p + "\n")
		}
		return nil
	})
	return b.String()
}
