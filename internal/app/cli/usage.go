package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usageExits makes every way of calling a command wrongly exit 2, as a
// bad flag does: a wrong number of arguments, and an unknown subcommand of
// a command group (cobra would show the group's help and exit 0, so a
// typo such as "rally settings gte" would look like success).
func usageExits(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		usageExits(c)
	}
	if cmd.HasParent() && cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
		cmd.Args = unknownSubcommand
		cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		return
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return &exitError{2, fmt.Errorf("%s: %w (see %s --help)", cmd.CommandPath(), err, cmd.CommandPath())}
			}
			return nil
		}
	}
}

// unknownSubcommand refuses a word after a command group that names none
// of its commands, with the nearest one when there is one.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	}
	if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", sug[0])
	} else {
		msg += fmt.Sprintf("; see %s --help", cmd.CommandPath())
	}
	return &exitError{2, errors.New(msg)}
}

// bareWordHint is what a bare word after "rally" that is not a command may
// have meant: the nearest command, or a flag of that name
// ("rally version" → "--version").
func bareWordHint(cmd *cobra.Command, word string) string {
	if sug := cmd.SuggestionsFor(word); len(sug) > 0 {
		return fmt.Sprintf("did you mean %q?", sug[0])
	}
	if fl := cmd.Flags().Lookup(strings.TrimLeft(word, "-")); fl != nil {
		return fmt.Sprintf("did you mean \"rally --%s\"?", fl.Name)
	}
	return ""
}
