// Package cli is rally's command line. Commands are built by constructors
// and wired together in newRoot; nothing registers itself in init.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// version is overridden at link time (-ldflags "-X ...cli.version=v1.2.3").
var version = "dev"

// streams are the process's standard files, passed down so that every command
// can be driven from a test without touching the real ones.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs rally with the given arguments and returns the process exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := streams{in: stdin, out: stdout, err: stderr}
	root := newRoot(s)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "rally:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

func newRoot(s streams) *cobra.Command {
	var f runFlags
	root := &cobra.Command{
		Use:   "rally [flags] [prompt]",
		Short: "An LLM agent whose turns survive provider failures",
		Example: `  rally -p "What does rally do?"                       # offline, on the sim model
  rally --preset flaky -p "What does rally do?"        # watch a retry against a fake flaky provider
  rally --mode json -p "read README.md"                # every event as a JSON line
  rally --api openai-completions --base-url http://127.0.0.1:8080/v1 --model qwen3 -p "hi"`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrompt(cmd, s, &f, args)
		},
	}
	f.register(root)
	// A flag that does not parse is bad usage (exit 2), like a bad value.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{2, err} })
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.AddCommand(
		newClassifyCmd(s),
		newCompactCmd(s),
		newSettingsCmd(s),
		newAuthCmd(s),
		newFakeLLMCmd(s),
		newHooksCmd(s),
		newFleetCmd(s),
		newBenchCmd(s),
	)
	return root
}
