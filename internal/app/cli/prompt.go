package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rally-agent/rally/internal/regfile"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
	"github.com/spf13/cobra"
)

// promptFlags shape what the model is told and may do in a run:
// --system, --append-system-prompt, --thinking, --tools and --no-tools.
type promptFlags struct {
	system   string
	append   string
	thinking string
	tools    []string
	noTools  bool
	// noContext leaves out the project's AGENTS.md/CLAUDE.md (pi's
	// --no-context-files).
	noContext bool
}

// builtinToolNames are the names --tools and --exclude-tools take.
func builtinToolNames() []string { return []string{"read", "write", "edit", "bash"} }

// contextFiles are read in each directory from the working directory up
// to the repository root; the first that exists in a directory is used,
// so a CLAUDE.md that is a copy or symlink of AGENTS.md is not sent twice.
var contextFiles = []string{"AGENTS.md", "CLAUDE.md"}

// maxContextFile bounds one project context file: a huge file is far
// more likely an accident than instructions for the model.
const maxContextFile = 256 << 10

func (p *promptFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&p.system, "system", "", "replace rally's system prompt (project AGENTS.md/CLAUDE.md are still added)")
	fl.StringVar(&p.append, "append-system-prompt", "", "add this text to the end of the system prompt")
	fl.StringVar(&p.thinking, "thinking", "", "reasoning effort for models that think: off, minimal, low, medium or high")
	fl.StringSliceVar(&p.tools, "tools", nil, "only these built-in tools, comma-separated: read,write,edit,bash")
	fl.BoolVar(&p.noTools, "no-tools", false, "no tools at all: the model can only answer")
}

// check refuses values that cannot work, as bad usage (exit 2).
func (p *promptFlags) check() error {
	if p.thinking != "" && !llm.ValidThinking(p.thinking) {
		return &exitError{2, fmt.Errorf("--thinking must be one of %s, got %q", strings.Join(llm.AllThinkingLevels(), ", "), p.thinking)}
	}
	if p.noTools && len(p.tools) > 0 {
		return &exitError{2, errors.New("give --tools or --no-tools, not both")}
	}
	known := builtinToolNames()
	for _, name := range p.tools {
		if !slices.Contains(known, name) {
			return &exitError{2, fmt.Errorf("--tools: unknown tool %q (the built-in tools are %s)", name, strings.Join(known, ", "))}
		}
	}
	return nil
}

// pick returns the tools the flags allow, in the order given.
func (p *promptFlags) pick(all []tool.Tool) []tool.Tool {
	if p.noTools {
		return nil
	}
	if len(p.tools) == 0 {
		return all
	}
	var out []tool.Tool
	seen := map[string]bool{}
	for _, name := range p.tools {
		for _, t := range all {
			if t.Spec().Name == name && !seen[name] {
				seen[name] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// systemPrompt is rally's base prompt (or --system), then the project
// context files from the repository root down to cwd, then
// --append-system-prompt. The tools named are the ones the run has.
func (p *promptFlags) systemPrompt(cwd string, tools []tool.Tool) (string, error) {
	base := p.system
	if base == "" {
		base = defaultSystemPrompt(cwd, tools)
	}
	parts := []string{base}
	var files []contextFile
	if !p.noContext {
		var err error
		if files, err = projectContext(cwd); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		parts = append(parts, fmt.Sprintf("Project instructions from %s:\n\n%s", f.path, strings.TrimSpace(f.text)))
	}
	if p.append != "" {
		parts = append(parts, p.append)
	}
	return strings.Join(parts, "\n\n"), nil
}

func defaultSystemPrompt(cwd string, tools []tool.Tool) string {
	if len(tools) == 0 {
		return "You are rally, a coding agent working in " + cwd + ". You have no tools in this run: answer from what you are told. Be brief."
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	return "You are rally, a coding agent working in " + cwd + ". Use the tools " + strings.Join(names, ", ") + " to inspect and change files. Be brief."
}

type contextFile struct{ path, text string }

// projectContext reads AGENTS.md (else CLAUDE.md) of every directory from
// the repository root (the nearest ancestor holding .git) down to cwd,
// outermost first, so deeper, more specific instructions come last. Outside
// a repository only cwd's own file counts: instructions from an unrelated
// parent directory (a home directory's AGENTS.md) must not leak in.
func projectContext(cwd string) ([]contextFile, error) {
	dirs := []string{cwd}
	for d := cwd; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(d)
		if parent == d { // no repository: cwd alone
			dirs = dirs[:1]
			break
		}
		d = parent
		dirs = append(dirs, d)
	}
	var out []contextFile
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, name := range contextFiles {
			path := filepath.Join(dirs[i], name)
			b, err := regfile.Read(path, maxContextFile)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, &exitError{2, fmt.Errorf("project context: %w", err)}
			}
			out = append(out, contextFile{path: path, text: string(b)})
			break
		}
	}
	return out, nil
}
