// Package cli is rally's command line. Commands are built by constructors
// and wired together in newRoot; nothing registers itself in init.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rally-agent/rally/internal/termsafe"
)

// version is overridden at link time (-ldflags "-X ...cli.version=v1.2.3").
var version = "dev"

// streams are the process's standard files, passed down so that every command
// can be driven from a test without touching the real ones.
type streams struct {
	in       io.Reader
	out, err io.Writer
	// ui opens the terminal UI with a first prompt ("" for none); nil
	// means runUI. Tests set it to see what the command line decided.
	ui func(cmd *cobra.Command, s streams, f *runFlags, first string) error
	// now is the clock that times are shown by (resets, marks, ages); nil
	// means time.Now. Tests pin it so what they print does not depend on
	// the hour or the machine's zone.
	now func() time.Time
}

// clock is the time by s's clock.
func (s streams) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
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
	return execute(streams{in: stdin, out: stdout, err: stderr}, args)
}

// execute is Main on given streams.
func execute(s streams, args []string) int {
	stderr := s.err
	root := newRoot(s)
	root.SetArgs(piArgs(args))
	if err := root.Execute(); err != nil {
		// An error can quote a provider's body or a file's contents.
		fmt.Fprintln(stderr, "rally:", termsafe.String(err.Error()))
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
		Use:   "rally [flags] [\"first prompt\"]",
		Short: "An LLM agent whose turns survive provider failures",
		Example: `  rally                                                # the terminal UI
  rally "What does rally do?"                          # the terminal UI, with a first prompt
  rally -p "What does rally do?"                       # offline, on the sim model
  rally --preset flaky -p "What does rally do?"        # watch a retry against a fake flaky provider
  rally --mode json -p "read README.md"                # every event as a JSON line
  rally --api openai-completions --base-url http://127.0.0.1:8080/v1 --model qwen3 -p "hi"`,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		// cobra's default, which SuggestionsFor does not fill in itself.
		SuggestionsMinimumDistance: 2,
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
		newWebCmd(s),
		newHooksCmd(s),
		newFleetCmd(s),
		newModelsCmd(s),
		newSessionsCmd(s),
		newBenchCmd(s),
	)
	rootHelp(root)
	usageExits(root)
	return root
}

// checkArgs is the rule for words after "rally" without -p: they are a
// first prompt for the UI only when quoted (one argument with a space in
// it). A bare word is a mistyped command and never reaches a model: a
// typo must not cost a paid request.
func checkArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if !strings.ContainsAny(args[0], " \t\n") {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.Name())
		if hint := bareWordHint(cmd, args[0]); hint != "" {
			msg += "; " + hint
		} else {
			msg += fmt.Sprintf("; to send it as a prompt: rally -p %q (see rally --help)", strings.Join(args, " "))
		}
		return &exitError{2, errors.New(msg)}
	}
	if len(args) > 1 {
		return &exitError{2, errors.New("give the first prompt as one quoted argument: rally \"…\"")}
	}
	return nil
}
