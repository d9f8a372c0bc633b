package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// rootHelp makes `rally --help` list every command with its one-line
// description and one example, so a newcomer sees what exists and how it
// is called without opening each command's help. Subcommands keep
// cobra's help.
func rootHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  rally help settings"
		case "completion":
			c.Example = "  rally completion bash > ~/.local/share/bash-completion/completions/rally"
		}
	}
	def := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != root {
			def(c, args)
			return
		}
		writeRootHelp(c.OutOrStdout(), c)
	})
}

func writeRootHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n  rally COMMAND [flags]\n\nExamples:\n%s\n\nCommands:\n", root.Short, root.UseLine(), root.Example)
	width := 0
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			width = max(width, len(c.Name()))
		}
	}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
		if ex := firstExample(c); ex != "" {
			fmt.Fprintf(w, "  %-*s    %s\n", width, "", ex)
		}
	}
	fmt.Fprintf(w, "\nFlags:\n%s\nUse \"rally COMMAND --help\" for more about a command.\n", root.LocalFlags().FlagUsages())
}

// firstExample is the shortest command line of a command's examples (the
// simplest call), or of its first subcommand's when the command is a
// group without its own.
func firstExample(c *cobra.Command) string {
	best := ""
	for _, line := range strings.Split(c.Example, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && (best == "" || len(line) < len(best)) {
			best = line
		}
	}
	if best != "" {
		return best
	}
	for _, sub := range c.Commands() {
		if ex := firstExample(sub); ex != "" {
			return ex
		}
	}
	return ""
}
