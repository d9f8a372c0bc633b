package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// deny is a list of files no tool may touch (Options.Deny).
type deny []string

// check refuses path when it is one of the denied files: the same name, or
// the same file reached through a symlink or a hard link.
func (d deny) check(name, path string) error {
	if len(d) == 0 {
		return nil
	}
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	info, statErr := os.Stat(real)
	for _, f := range d {
		same := filepath.Clean(f) == path || filepath.Clean(f) == real
		if !same && statErr == nil {
			if fi, err := os.Stat(f); err == nil {
				same = os.SameFile(info, fi)
			}
		}
		if same {
			return refused(name, f)
		}
	}
	return nil
}

// mention refuses a command line that names a denied file: by its
// absolute path, relative to dir, under ~, or under a variable of env
// that holds one of its parent directories ($HOME/…, ${RALLY_HOME}/…).
// It is a check of the words the model wrote, not a sandbox: a command
// can reach the file in ways no text check sees (a glob, a script), which
// is why a program also redacts the keys the file holds.
func (d deny) mention(name, dir, command string, env []string) error {
	for _, f := range d {
		for _, spelling := range spellings(filepath.Clean(f), dir, env) {
			if strings.Contains(command, spelling) {
				return refused(name, f)
			}
		}
	}
	return nil
}

func refused(name, file string) error {
	return fmt.Errorf("%s: %s is off limits to tools: it holds rally's credentials, and its keys must not reach "+
		"the conversation. Do not try to read it another way; ask the user if you need something from it", name, file)
}

// spellings lists the ways a command line may name the file f.
func spellings(f, dir string, env []string) []string {
	out := []string{f}
	if dir != "" {
		if rel, err := filepath.Rel(dir, f); err == nil {
			out = append(out, rel)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if rel, ok := under(home, f); ok {
			out = append(out, "~/"+rel)
		}
	}
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			continue
		}
		if rel, ok := under(filepath.Clean(v), f); ok {
			out = append(out, "$"+k+"/"+rel, "${"+k+"}/"+rel)
		}
	}
	return out
}

// under returns f relative to dir when f is inside dir.
func under(dir, f string) (string, bool) {
	rel, err := filepath.Rel(dir, f)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}
