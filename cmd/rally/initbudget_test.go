package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateInitBudget = flag.Bool("update-init-budget", false, "rewrite testdata/init-budget.txt from this build's package init")

// The init budget: what every rally process pays before main, whatever
// it is asked to do. Bytes and allocations are counted by the runtime
// (GODEBUG=inittrace=1), so they are the same run after run to within a
// few hundred bytes (map seeds); init time is not, and stays in
// BenchmarkVersion.
const (
	// initHeadroom is how far the totals may pass the recorded table:
	// room for the jitter and for an error value or two, not for a
	// package that builds tables or compiles regexps at init.
	initHeadroomBytes  = 16 << 10
	initHeadroomAllocs = 100
	// initCeiling holds whatever the table says: raising it is a
	// decision (issue 25: a process pays only for what it uses), not a
	// regenerated file.
	initCeilingBytes  = 1 << 20
	initCeilingAllocs = 8000
)

const initBudgetFile = "testdata/init-budget.txt"

// initCost is one package's init allocations.
type initCost struct {
	pkg           string
	bytes, allocs int64
}

// TestInitBudget builds rally, runs `rally --version` under
// GODEBUG=inittrace=1 and fails when the summed package init
// allocations pass the recorded table (testdata/init-budget.txt) by more
// than the headroom, or pass the ceiling, naming the packages that grew
// most. After a change that is meant to cost more, rewrite the table:
//
//	go test ./cmd/rally -run TestInitBudget -update-init-budget
func TestInitBudget(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rally")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := measureInit(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if *updateInitBudget {
		if err := os.MkdirAll(filepath.Dir(initBudgetFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(initBudgetFile, formatInitTable(got), 0o644); err != nil {
			t.Fatal(err)
		}
		b, a := initTotals(got)
		t.Logf("wrote %s: %d bytes, %d allocations", initBudgetFile, b, a)
		return
	}
	data, err := os.ReadFile(initBudgetFile)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/rally -run TestInitBudget -update-init-budget writes it)", err)
	}
	want, err := parseInitTable(string(data))
	if err != nil {
		t.Fatalf("%s: %v", initBudgetFile, err)
	}
	if msg := checkInitBudget(got, want); msg != "" {
		t.Fatal(msg)
	}
}

// measureInit runs bin --version in an empty environment (some packages
// read it at init: the locale, PATH for clipboard tools) and returns the
// init cost of each package.
func measureInit(bin, home string) ([]initCost, error) {
	cmd := exec.Command(bin, "--version")
	cmd.Env = []string{"GODEBUG=inittrace=1", "HOME=" + home}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rally --version: %v\n%s", err, stderr.String())
	}
	costs, err := parseInitTrace(stderr.String())
	if err == nil && len(costs) == 0 {
		err = fmt.Errorf("rally --version: no inittrace lines in %q", stderr.String())
	}
	return costs, err
}

// parseInitTrace reads the runtime's lines
// "init <pkg> @0.5 ms, 0.010 ms clock, 4952 bytes, 4 allocs".
func parseInitTrace(s string) ([]initCost, error) {
	var out []initCost
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.ParseInt(f[7], 10, 64)
		a, err2 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parse inittrace line %q", sc.Text())
		}
		out = append(out, initCost{f[1], b, a})
	}
	return out, sc.Err()
}

func initTotals(cs []initCost) (bytes, allocs int64) {
	for _, c := range cs {
		bytes += c.bytes
		allocs += c.allocs
	}
	return bytes, allocs
}

// checkInitBudget returns why got is over budget against the recorded
// want, or "".
func checkInitBudget(got, want []initCost) string {
	gb, ga := initTotals(got)
	wb, wa := initTotals(want)
	var over []string
	if gb > wb+initHeadroomBytes {
		over = append(over, fmt.Sprintf("%d bytes, over the recorded %d + %d headroom", gb, wb, initHeadroomBytes))
	}
	if ga > wa+initHeadroomAllocs {
		over = append(over, fmt.Sprintf("%d allocations, over the recorded %d + %d headroom", ga, wa, initHeadroomAllocs))
	}
	if gb > initCeilingBytes {
		over = append(over, fmt.Sprintf("%d bytes, over the ceiling of %d", gb, initCeilingBytes))
	}
	if ga > initCeilingAllocs {
		over = append(over, fmt.Sprintf("%d allocations, over the ceiling of %d", ga, initCeilingAllocs))
	}
	if over == nil {
		return ""
	}
	return fmt.Sprintf("package init of rally --version: %s\nlargest growth against %s:\n%s"+
		"\nmove the work out of init (build it on first use), or, when the cost is meant, rewrite the table:\n"+
		"\tgo test ./cmd/rally -run TestInitBudget -update-init-budget",
		strings.Join(over, "; "), initBudgetFile, initGrowth(got, want, 8))
}

// initGrowth lists the n packages whose init grew most in bytes since
// the table (a package the table does not have grew from nothing),
// leaving out growth under 1 KiB.
func initGrowth(got, want []initCost, n int) string {
	was := map[string]initCost{}
	for _, c := range want {
		was[c.pkg] = c
	}
	type delta struct {
		c             initCost
		bytes, allocs int64
		isNew         bool
	}
	var ds []delta
	for _, c := range got {
		w, ok := was[c.pkg]
		ds = append(ds, delta{c, c.bytes - w.bytes, c.allocs - w.allocs, !ok})
	}
	slices.SortStableFunc(ds, func(a, b delta) int { return cmp.Compare(b.bytes, a.bytes) })
	var sb strings.Builder
	for _, d := range ds[:min(n, len(ds))] {
		if d.bytes <= 0 {
			break
		}
		if d.bytes < 1<<10 && !d.isNew {
			continue // the jitter of map seeds
		}
		note := ""
		if d.isNew {
			note = " (new)"
		}
		fmt.Fprintf(&sb, "\t%s%s: +%d bytes, %+d allocations (now %d bytes, %d allocations)\n", d.c.pkg, note, d.bytes, d.allocs, d.c.bytes, d.c.allocs)
	}
	return sb.String()
}

func formatInitTable(cs []initCost) []byte {
	var sb strings.Builder
	b, a := initTotals(cs)
	sb.WriteString("# Package init allocations of `rally --version` (GODEBUG=inittrace=1, empty\n")
	sb.WriteString("# environment), read by TestInitBudget. Rewrite after a change meant to cost more:\n")
	sb.WriteString("#\tgo test ./cmd/rally -run TestInitBudget -update-init-budget\n")
	fmt.Fprintf(&sb, "# total: %d bytes, %d allocations\n", b, a)
	sb.WriteString("# package\tbytes\tallocs\n")
	sorted := slices.Clone(cs)
	slices.SortStableFunc(sorted, func(x, y initCost) int { return cmp.Compare(y.bytes, x.bytes) })
	for _, c := range sorted {
		fmt.Fprintf(&sb, "%s\t%d\t%d\n", c.pkg, c.bytes, c.allocs)
	}
	return []byte(sb.String())
}

func parseInitTable(s string) ([]initCost, error) {
	var out []initCost
	for i, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want package, bytes, allocs: %q", i+1, line)
		}
		b, err1 := strconv.ParseInt(f[1], 10, 64)
		a, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: %q", i+1, line)
		}
		out = append(out, initCost{f[0], b, a})
	}
	return out, nil
}

// TestCheckInitBudget pins the rule on made-up tables: jitter within the
// headroom passes; a package that grew or a new one fails, named first.
func TestCheckInitBudget(t *testing.T) {
	table := []initCost{{"a", 100_000, 1000}, {"b", 50_000, 500}}
	tests := []struct {
		name string
		got  []initCost
		want []string // in the message, in order; none: within budget
	}{
		{"as recorded", table, nil},
		{"jitter", []initCost{{"a", 100_400, 1002}, {"b", 49_900, 500}}, nil},
		{"a package grew", []initCost{{"a", 100_000, 1000}, {"b", 90_000, 900}}, []string{"190000 bytes", "b: +40000 bytes, +400 allocations"}},
		{"allocations alone", []initCost{{"a", 100_000, 1200}, {"b", 50_000, 500}}, []string{"1700 allocations"}},
		{"a new package, named before one that grew less", append(slices.Clone(table), initCost{"heavy", 2 << 20, 30000}, initCost{"c", 20_000, 10}),
			[]string{"over the ceiling of 1048576", "heavy (new): +2097152 bytes", "c (new): +20000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saysInOrder(t, "checkInitBudget", checkInitBudget(tt.got, table), tt.want)
		})
	}
}

// TestParseInitTrace reads the runtime's own format and the table back.
func TestParseInitTrace(t *testing.T) {
	trace := "init internal/bytealg @0.006 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/yuin/goldmark/util @13 ms, 0.49 ms clock, 146136 bytes, 1967 allocs\n" +
		"rally version dev\n"
	got, err := parseInitTrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	want := []initCost{{"internal/bytealg", 0, 0}, {"github.com/yuin/goldmark/util", 146136, 1967}}
	if !slices.Equal(got, want) {
		t.Fatalf("parseInitTrace = %v, want %v", got, want)
	}
	back, err := parseInitTable(string(formatInitTable(got)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, []initCost{want[1], want[0]}) {
		t.Fatalf("table round trip = %v", back)
	}
	if _, err := parseInitTable("pkg\tx\t1\n"); err == nil {
		t.Fatal("a bad table line parsed")
	}
}
