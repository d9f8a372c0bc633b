package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/app/bench"
	"github.com/spf13/cobra"
)

// newBenchCmd is `rally bench`: the end-to-end benchmark of this very
// binary (internal/bench). It is a subcommand rather than `go run ./bench`
// so that what is measured is the rally a user runs, release flags and
// all, with nothing to build first; the scale group re-runs the binary as
// its worker so that the sessions' heap is measured without the fake LLM.
func newBenchCmd(s streams) *cobra.Command {
	var (
		runs        int
		compare     string
		only        []string
		quick       bool
		out         string
		scaleWorker int
		fakeURL     string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure rally end to end against the fake LLM (optionally beside another agent)",
		Long: `bench starts the fake LLM on loopback and measures this rally binary: cold
start, streaming deltas/s in both event modes, abort latency, recovery
efficiency, N concurrent sessions with random faults, and resume of long
sessions. Each figure is a median, a min–max range and a p99 over repeated
runs (--runs), printed as a Markdown table with the issue's targets.

--compare runs the RPC measurements against another agent that speaks the
same protocol (words split at spaces, no shell quoting), configured as the
pi coding agent is (a custom provider in $PI_CODING_AGENT_DIR/models.json)
unless its --version says rally.`,
		Example: `  rally bench --quick
  rally bench --only stream,abort --runs 10
  rally bench --compare "/tmp/pi/node_modules/.bin/pi" --out docs/benchmarks.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), stopSignals()...)
			defer stop()
			if scaleWorker > 0 {
				return bench.WriteScale(ctx, s.out, fakeURL, scaleWorker)
			}
			for _, g := range only {
				if !slices.Contains(bench.Groups(), g) {
					return &exitError{2, fmt.Errorf("bench: no group %q (have %s)", g, strings.Join(bench.Groups(), ", "))}
				}
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			cfg := bench.Config{
				Rally: bench.Agent{Name: "rally", Argv: []string{self}}, Runs: runs, Groups: only, Quick: quick,
				Worker: []string{self, "bench"}, Progress: s.err,
			}
			if compare != "" {
				a, err := compareAgent(ctx, compare)
				if err != nil {
					return &exitError{2, err}
				}
				cfg.Compare = &a
			}
			rows, err := bench.Run(ctx, cfg)
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "%s\n\n", machine(os.Args, compare))
			other := ""
			if cfg.Compare != nil {
				other = cfg.Compare.Name
			}
			if werr := bench.Write(&b, rows, other); werr != nil {
				return werr
			}
			if out != "" {
				if werr := os.WriteFile(out, b.Bytes(), 0o644); werr != nil {
					return fmt.Errorf("bench: %w", werr)
				}
			}
			_, _ = s.out.Write(b.Bytes())
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&runs, "runs", 20, "repetitions of each measurement (slow ones repeat fewer times)")
	fl.StringVar(&compare, "compare", "", "another agent's command to measure beside rally over RPC")
	fl.StringSliceVar(&only, "only", nil, "run only these groups: "+strings.Join(bench.Groups(), ", "))
	fl.BoolVar(&quick, "quick", false, "small sizes only, for a smoke run")
	fl.StringVar(&out, "out", "", "also write the report to this file")
	fl.IntVar(&scaleWorker, "scale-worker", 0, "internal: run N sessions against --fake-url and print the result as JSON")
	fl.StringVar(&fakeURL, "fake-url", "", "internal: the fake LLM of --scale-worker")
	_ = fl.MarkHidden("scale-worker")
	_ = fl.MarkHidden("fake-url")
	return cmd
}

// compareAgent builds the agent of --compare: its name from the command,
// and rally's configuration when its --version says it is a rally.
func compareAgent(ctx context.Context, command string) (bench.Agent, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return bench.Agent{}, errors.New("bench: --compare: empty command")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, argv[0], append(argv[1:len(argv):len(argv)], "--version")...).CombinedOutput()
	if err != nil {
		return bench.Agent{}, fmt.Errorf("bench: --compare: %s --version: %w", command, err)
	}
	name := filepath.Base(argv[len(argv)-1])
	name = strings.TrimSuffix(name, filepath.Ext(name))
	isRally := strings.HasPrefix(strings.TrimSpace(string(v)), "rally")
	if !isRally {
		name += " " + strings.TrimSpace(string(v))
	}
	return bench.Agent{Name: name, Argv: argv, Pi: !isRally}, nil
}

// machine is the report's heading: when, where and how it was measured.
func machine(args []string, compare string) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	cmdline := "rally " + strings.Join(args[1:], " ")
	s := fmt.Sprintf("Measured %s on %s, %d cores (%s/%s), rally %s built with %s (%s).\nCommand: `%s`",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, version, runtime.Version(), selfBuild(), cmdline)
	if compare != "" {
		s += fmt.Sprintf("\nCompared with: `%s`", compare)
	}
	return s
}
