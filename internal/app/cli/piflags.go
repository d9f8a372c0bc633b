package cli

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// pi's command-line flags, so that programs written to spawn the pi coding
// agent (pi-acp runs `pi --mode rpc --no-themes [--session FILE]`) spawn
// rally unchanged. Each one either does in rally what it does in pi, is
// accepted and ignored because rally has nothing it would act on (themes,
// extensions, skills, prompt templates, MCP), or is refused with what to
// use instead. rally --help lists them under "pi's flags".

// piIgnored are pi's flags that rally accepts and ignores, with why.
var piIgnored = []struct {
	name, short, value, why string // value "" for a boolean flag
}{
	{"no-themes", "", "", "rally has no themes"},
	{"theme", "", "path", "rally has no themes"},
	{"use-theme", "", "name", "rally has no themes"},
	{"no-extensions", "", "", "rally has no extensions"},
	{"extension", "e", "path", "rally has no extensions"},
	{"no-skills", "", "", "rally has no skills"},
	{"skill", "", "path", "rally has no skills"},
	{"no-prompt-templates", "", "", "rally has no prompt templates"},
	{"prompt-template", "", "path", "rally has no prompt templates"},
	{"no-mcp", "", "", "rally has no MCP client"},
	{"offline", "", "", "rally makes no network call of its own besides the model's"},
	{"tui-mode", "", "mode", "rally's terminal UI has one mode"},
	{"approve", "a", "", "tools.confirm in settings says which tools ask first"},
	{"no-approve", "", "", "tools.confirm in settings says which tools ask first"},
	{"models", "", "patterns", "cycle_model cycles over every available model"},
}

// piShort are pi's shorthands of more than one letter, which pflag cannot
// declare: they are rewritten to the long flag before parsing.
var piShort = map[string]string{
	"-ne":  "--no-extensions",
	"-ns":  "--no-skills",
	"-np":  "--no-prompt-templates",
	"-nc":  "--no-context-files",
	"-na":  "--no-approve",
	"-nt":  "--no-tools",
	"-xt":  "--exclude-tools",
	"-nbt": "--no-builtin-tools",
}

// piArgs rewrites pi's long shorthands in args (up to a "--").
func piArgs(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if long, ok := piShort[a]; ok {
			out[i] = long
		}
	}
	return out
}

// piFlags are the pi flags that change what a run does.
type piFlags struct {
	name           string
	noContextFiles bool
	excludeTools   []string
	noBuiltinTools bool
	apiKey         string
	resume         bool
	fork           string
	sessionID      string
}

func (p *piFlags) register(cmd *cobra.Command, prompt *promptFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&p.name, "name", "n", "", "name the session (as set_session_name)")
	fl.BoolVar(&p.noContextFiles, "no-context-files", false, "do not read AGENTS.md/CLAUDE.md into the system prompt (-nc)")
	fl.StringSliceVar(&p.excludeTools, "exclude-tools", nil, "all built-in tools but these, comma-separated (-xt)")
	fl.BoolVar(&p.noBuiltinTools, "no-builtin-tools", false, "no built-in tools (-nbt; rally has no others, so as --no-tools)")
	fl.StringVar(&prompt.system, "system-prompt", "", "pi's name for --system")
	fl.StringVar(&p.apiKey, "api-key", "", "refused: give the key in the provider's variable or with rally auth add")
	fl.BoolVarP(&p.resume, "resume", "r", false, "refused: use rally sessions --resume")
	fl.StringVar(&p.fork, "fork", "", "refused: use fork over RPC, or /resume in the UI")
	fl.StringVar(&p.sessionID, "session-id", "", "refused: rally names new sessions itself")
	for _, name := range []string{"system-prompt", "", "api-key", "resume", "fork", "session-id"} {
		fl.SetAnnotation(name, piAnnotation, []string{"pi"})
	}
	for _, ig := range piIgnored {
		usage := "pi's; ignored: " + ig.why
		if ig.value == "" {
			fl.BoolP(ig.name, ig.short, false, usage)
		} else {
			fl.StringP(ig.name, ig.short, "", usage)
		}
		fl.SetAnnotation(ig.name, piAnnotation, []string{"pi"})
	}
	if f := fl.Lookup("tools"); f != nil && f.Shorthand == "" {
		f.Shorthand = "t"
	}
}

// piAnnotation marks the flags help lists under "pi's flags".
const piAnnotation = "rally/pi"

// check refuses pi's flags that rally does not do, naming what it does
// instead, and applies the tool flags to prompt.
func (p *piFlags) check(cmd *cobra.Command, prompt *promptFlags) error {
	fl := cmd.Flags()
	switch {
	case fl.Changed("api-key"):
		return &exitError{2, errors.New("--api-key is not taken: a key on the command line is visible to every user of this machine; " +
			"give it in the provider's variable (OPENAI_API_KEY, …, or RALLY_API_KEY) or store it with rally auth add")}
	case p.resume:
		return &exitError{2, errors.New("--resume: pick a session with rally sessions --resume, or /resume in the UI")}
	case fl.Changed("fork"):
		return &exitError{2, errors.New("--fork: fork a session over RPC (fork, clone), or continue it with --session FILE")}
	case fl.Changed("session-id"):
		return &exitError{2, errors.New("--session-id: rally names new sessions itself; --session FILE picks the file")}
	}
	if p.noBuiltinTools {
		prompt.noTools = true
	}
	if len(p.excludeTools) > 0 {
		if len(prompt.tools) > 0 {
			return &exitError{2, errors.New("give --tools or --exclude-tools, not both")}
		}
		known := builtinToolNames()
		for _, name := range p.excludeTools {
			if !slices.Contains(known, name) {
				return &exitError{2, errors.New("--exclude-tools: unknown tool " + name + " (the built-in tools are " + strings.Join(known, ", ") + ")")}
			}
		}
		for _, name := range known {
			if !slices.Contains(p.excludeTools, name) {
				prompt.tools = append(prompt.tools, name)
			}
		}
		if len(prompt.tools) == 0 {
			prompt.noTools = true
		}
	}
	prompt.noContext = p.noContextFiles
	return nil
}
