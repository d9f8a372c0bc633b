package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

var updateSizeBudget = flag.Bool("update-size-budget", false, "rewrite testdata/size-budget.txt from this build")

// What the linker keeps is deterministic for one toolchain and one set of
// dependencies, so these are exact guards, not timings. Why they matter:
// most of an idle rally process's memory is pages of its own binary
// (docs/benchmarks.md, "Start-up"), so a bigger binary is a bigger
// process.

// linkRally builds rally with the linker's dependency dump and returns the
// binary and the dump.
func linkRally(t *testing.T) (bin, dump string) {
	t.Helper()
	bin = filepath.Join(t.TempDir(), "rally")
	cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags=-dumpdep", "-o", bin, ".")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, stderr.String())
	}
	// The linker prints the graph on stdout or stderr depending on the
	// toolchain: read both.
	return bin, stdout.String() + stderr.String()
}

// TestMethodDCE fails when the binary can call a method chosen by name
// at run time (reflect.Value.MethodByName with a name that is not a
// constant, as text/template's field evaluation does): the linker then
// keeps every exported method of every type stored in an interface, and
// rally grew from 25 to 38 MB that way (issue 25). It names the path
// from the package that reached it.
func TestMethodDCE(t *testing.T) {
	_, dump := linkRally(t)
	if msg := reflectMethodReached(dump); msg != "" {
		t.Fatal(msg)
	}
}

// reflectMethodReached reads a -dumpdep graph ("from -> to" per line,
// a symbol that calls a method by name flagged "<ReflectMethod>") and
// returns how the first such symbol was reached, or "".
func reflectMethodReached(dump string) string {
	const flagRM = " <ReflectMethod>"
	parent := map[string]string{}
	var hit string
	sc := bufio.NewScanner(strings.NewReader(dump))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		from = trimFlags(from)
		name := trimFlags(to)
		if _, seen := parent[name]; !seen {
			parent[name] = from
		}
		if hit == "" && strings.HasSuffix(to, flagRM) {
			hit = name
		}
	}
	if hit == "" {
		return ""
	}
	path := []string{hit}
	for p := parent[hit]; p != "" && p != "_" && len(path) < 12; p = parent[p] {
		path = append(path, p)
	}
	return fmt.Sprintf("the linker's method dead-code elimination is off: %s calls a method by a name known only at run time,\n"+
		"reached by (callee first):\n\t%s\n"+
		"html/template and text/template executions do this; write the page with internal/htmlw instead",
		hit, strings.Join(path, "\n\t"))
}

// trimFlags drops the linker's <...> annotations from a symbol.
func trimFlags(sym string) string {
	if i := strings.Index(sym, " <"); i >= 0 {
		return sym[:i]
	}
	return sym
}

// The size budget: the binary may pass the recorded size by
// sizeHeadroom (an error path or two, not a dependency).
const (
	sizeHeadroom    = 256 << 10
	sizeBudgetFile  = "testdata/size-budget.txt"
	sizeBudgetUsage = "go test ./cmd/rally -run TestBinarySize -update-size-budget"
)

// TestBinarySize fails when rally's binary passes the size recorded in
// testdata/size-budget.txt for this toolchain by more than the headroom.
// Another toolchain, platform or cgo setting links another size: the test
// says so and skips rather than compare unlike builds.
func TestBinarySize(t *testing.T) {
	bin, _ := linkRally(t)
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	// cgo links other code (the C resolver and user lookup): a build of
	// its own, like another toolchain.
	cgo, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil {
		t.Fatalf("go env CGO_ENABLED: %v", err)
	}
	toolchain := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + " CGO_ENABLED=" + strings.TrimSpace(string(cgo))
	if *updateSizeBudget {
		body := fmt.Sprintf("# Size in bytes of `go build -buildvcs=false ./cmd/rally`, read by TestBinarySize.\n"+
			"# Rewrite after a change meant to cost more, and say why in the commit:\n#\t%s\n%s\t%d\n", sizeBudgetUsage, toolchain, fi.Size())
		if err := os.WriteFile(sizeBudgetFile, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %s %d bytes", sizeBudgetFile, toolchain, fi.Size())
		return
	}
	data, err := os.ReadFile(sizeBudgetFile)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, sizeBudgetUsage)
	}
	recordedFor, want, err := parseSizeBudget(string(data))
	if err != nil {
		t.Fatalf("%s: %v", sizeBudgetFile, err)
	}
	if recordedFor != toolchain {
		t.Skipf("%s is recorded for %s, this is %s (binary %d bytes)", sizeBudgetFile, recordedFor, toolchain, fi.Size())
	}
	if msg := checkSize(fi.Size(), want); msg != "" {
		t.Fatal(msg)
	}
}

func checkSize(got, want int64) string {
	if got <= want+sizeHeadroom {
		return ""
	}
	return fmt.Sprintf("rally is %d bytes, %d over the recorded %d (headroom %d): a new dependency, or one that links more;\n"+
		"`go tool nm -size -sort size` on the binary shows what; when it is meant, rewrite the budget:\n\t%s",
		got, got-want, want, sizeHeadroom, sizeBudgetUsage)
}

// parseSizeBudget reads the "toolchain<TAB>bytes" line.
func parseSizeBudget(s string) (toolchain string, size int64, err error) {
	for line := range strings.SplitSeq(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tc, n, ok := strings.Cut(line, "\t")
		if !ok {
			return "", 0, fmt.Errorf("want toolchain, tab, bytes: %q", line)
		}
		size, err = strconv.ParseInt(n, 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("bad size: %q", line)
		}
		return tc, size, nil
	}
	return "", 0, fmt.Errorf("no size line")
}

// TestReflectMethodReached pins the reading of the linker's graph on a
// made-up one, and the size rule.
func TestReflectMethodReached(t *testing.T) {
	tests := []struct {
		name, dump string
		want       []string // in the message, in order; none: clean
	}{
		{"clean", "_ -> main.main\nmain.main -> fmt.Println\n", nil},
		{"a flagged callee not first", "_ -> main.main\nmain.main -> web.render\n" +
			"web.render -> html/template.(*Template).Execute\n" +
			"html/template.(*Template).Execute -> text/template.(*state).evalField <ReflectMethod>\n" +
			"text/template.(*state).evalField <ReflectMethod> -> reflect.Value.MethodByName\n",
			[]string{"text/template.(*state).evalField calls a method", "html/template.(*Template).Execute", "web.render", "main.main"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saysInOrder(t, "reflectMethodReached", reflectMethodReached(tt.dump), tt.want)
		})
	}
	if checkSize(100+sizeHeadroom, 100) != "" || checkSize(101+sizeHeadroom, 100) == "" {
		t.Fatal("checkSize: the headroom is not where it should be")
	}
}

// saysInOrder fails unless msg holds each of want in order; want nil: msg
// must be "" (what a check returns when all is well).
func saysInOrder(t *testing.T, what, msg string, want []string) {
	t.Helper()
	if (msg == "") != (want == nil) {
		t.Fatalf("%s = %q, want it to say %q", what, msg, want)
	}
	rest := msg
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q not in order in:\n%s", w, msg)
		}
		rest = rest[i+len(w):]
	}
}
