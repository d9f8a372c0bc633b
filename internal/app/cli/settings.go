package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

// exitInvalid is the exit status for settings rally refuses: an invalid
// file, an invalid value or a key that is not a setting.
const exitInvalid = 2

func newSettingsCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show, change and check the settings files",
		Long: `rally reads two settings files, merged key by key over the built-in defaults:

  $RALLY_HOME/settings.json   global (RALLY_HOME defaults to ~/.rally)
  .rally/settings.json        project, in the working directory; wins

Flags such as --provider, --model, --api and --base-url, and RALLY_API_KEY,
win over both for one run. A missing key takes its default, unknown keys are
reported as warnings and kept, and an invalid file is refused with the file,
the key and what was expected; rally never overwrites it.`,
		Example: `  rally settings get retry.maxRetries
  rally settings set retry.maxRetries 5
  rally settings set --project providers.openai.maxRetries 1
  rally settings validate
  rally settings schema > schema.json`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newSettingsGetCmd(s),
		newSettingsSetCmd(s),
		newSettingsUnsetCmd(s),
		newSettingsValidateCmd(s),
		newSettingsSchemaCmd(s),
		newSettingsPathCmd(s),
	)
	return cmd
}

func newSettingsGetCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "get [KEY]",
		Short: "Print the effective value of a setting as JSON",
		Long: `Prints the value of KEY after merging both files over the defaults, as
indented JSON. KEY is a dotted path; array elements are written [N]. With no
KEY, prints every setting.`,
		Example: `  rally settings get retry.maxRetries
  rally settings get providers.openai.baseUrl
  rally settings get retry
  rally settings get hooks[0].command`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := loadSettings(s)
			if err != nil {
				return err
			}
			key := ""
			if len(args) == 1 {
				key = args[0]
			}
			v, err := st.Get(key)
			if err != nil {
				return &exitError{exitInvalid, err}
			}
			_, err = fmt.Fprintf(s.out, "%s\n", v)
			return err
		},
	}
}

func newSettingsSetCmd(s streams) *cobra.Command {
	var project bool
	cmd := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change a setting in the global or project file",
		Long: `Sets KEY to VALUE in the global file, or with --project in the project
file. VALUE is read as JSON when it parses (5, true, ["a/b"], {"api": "sim"}),
else as a string. The result is validated before anything is written: an
invalid value, an unknown key or an invalid file leaves the file exactly as it
was and exits with status 2. The write is atomic and keeps unknown keys, the
order of keys and the file's permissions.`,
		Example: `  rally settings set retry.maxRetries 5
  rally settings set retry.streaming beforeOutput
  rally settings set retry.fallbackModels '["openrouter/anthropic/claude-sonnet-4"]'
  rally settings set --project providers.local.baseUrl http://127.0.0.1:11434/v1
  rally settings set providers.vllm '{"api": "openai-completions", "baseUrl": "http://gpu:8000/v1"}'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := []byte(args[1])
			if !json.Valid(raw) {
				raw, _ = json.Marshal(args[1]) // a string always marshals
			}
			return editSettings(cmd.Context(), s, project, func(f *settings.File) (string, error) {
				if err := f.SetJSON(args[0], raw); err != nil {
					return "", err
				}
				v, _ := f.Get(args[0])
				return fmt.Sprintf("%s: %s = %s", f.Name, args[0], oneLine(v)), nil
			})
		},
	}
	cmd.Flags().BoolVar(&project, "project", false, "write .rally/settings.json in the working directory instead of the global file")
	return cmd
}

func newSettingsUnsetCmd(s streams) *cobra.Command {
	var project bool
	cmd := &cobra.Command{
		Use:   "unset KEY",
		Short: "Remove a setting from the global or project file",
		Long: `Removes KEY from the global file, or with --project from the project file,
so that the other file or the default applies again.`,
		Example: `  rally settings unset retry.maxRetries
  rally settings unset --project providers.openai.maxRetries`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editSettings(cmd.Context(), s, project, func(f *settings.File) (string, error) {
				if err := f.Delete(args[0]); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s: %s removed", f.Name, args[0]), nil
			})
		},
	}
	cmd.Flags().BoolVar(&project, "project", false, "edit .rally/settings.json in the working directory instead of the global file")
	return cmd
}

// editSettings applies edit to one file, checks the result together with
// the other file, and saves only if everything is valid.
func editSettings(ctx context.Context, s streams, project bool, edit func(*settings.File) (string, error)) error {
	src, err := settingsSources()
	if err != nil {
		return err
	}
	target, other := src.Global, src.Project
	if project && src.Project.Path != "" {
		target, other = src.Project, src.Global
	}
	f, err := settings.ReadFile(target)
	if err != nil {
		if errors.Is(err, settings.ErrInvalid) {
			return &exitError{exitInvalid, fmt.Errorf("%w\nrally: fix the file by hand; it was not changed", err)}
		}
		return err
	}
	done, err := edit(f)
	if err != nil {
		return &exitError{exitInvalid, err}
	}
	// The other file takes part in the cross-file checks (a defaultProvider
	// defined there) unless it is broken itself: that must not block
	// editing this one.
	files := []*settings.File{f}
	if o, err := settings.ReadFile(other); other.Path != "" && err == nil {
		if _, err := o.Check(); err == nil {
			files = append(files, o)
			if project {
				files = []*settings.File{o, f}
			}
		}
	}
	_, warns, err := settings.Merge(files...)
	printWarnings(s, warns)
	if err != nil {
		return &exitError{exitInvalid, list(err)}
	}
	if err := f.Save(ctx); err != nil {
		if errors.Is(err, settings.ErrInvalid) {
			return &exitError{exitInvalid, list(err)}
		}
		return err
	}
	_, err = fmt.Fprintln(s.out, done)
	return err
}

func newSettingsValidateCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "validate [FILE...]",
		Short: "Check the settings files",
		Long: `Checks the global and project files, alone and merged: each problem is
printed with the file, the key and what was expected, unknown keys as
warnings. Exits with status 2 if a file is invalid. Given FILEs, checks those
instead, each on its own.`,
		Example: `  rally settings validate
  rally settings validate ./team-settings.json`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return validateFiles(s, args)
			}
			src, err := settingsSources()
			if err != nil {
				return err
			}
			_, warns, err := settings.Load(src)
			printWarnings(s, warns)
			if err != nil {
				if errors.Is(err, settings.ErrInvalid) {
					return &exitError{exitInvalid, list(err)}
				}
				return err
			}
			for _, l := range []settings.Source{src.Global, src.Project} {
				if l.Path == "" {
					continue
				}
				state := "ok"
				if _, err := os.Stat(l.Path); err != nil {
					state = "not found, defaults apply"
				}
				fmt.Fprintf(s.out, "%s: %s\n", l.Name, state)
			}
			return nil
		},
	}
}

func validateFiles(s streams, paths []string) error {
	var errs []error
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("validate: %w", err))
			continue
		}
		f, err := settings.ReadFile(settings.Source{Path: p, Name: p})
		if err == nil {
			var warns []settings.Warning
			_, warns, err = settings.Merge(f)
			printWarnings(s, warns)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(s.out, "%s: ok\n", p)
	}
	err := errors.Join(errs...)
	if errors.Is(err, settings.ErrInvalid) {
		return &exitError{exitInvalid, list(err)}
	}
	return err
}

func newSettingsSchemaCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the settings files",
		Long: `Prints the JSON Schema (draft 2020-12) that rally validates settings files
with. Point an editor at it with "$schema" in the file for completion and
inline errors.`,
		Example: `  rally settings schema > ~/.rally/schema.json
  rally settings set '$schema' ./schema.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := s.out.Write(settings.Schema())
			return err
		},
	}
}

func newSettingsPathCmd(s streams) *cobra.Command {
	var global, project bool
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print where the settings files are",
		Long: `Prints the global and the project settings file paths, whether or not
they exist. With --global or --project, prints only that path, for scripts.`,
		Example: `  rally settings path
  $EDITOR "$(rally settings path --project)"`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			src, err := settingsSources()
			if err != nil {
				return err
			}
			switch {
			case global:
				fmt.Fprintln(s.out, src.Global.Path)
			case project:
				p := src.Project.Path
				if p == "" { // the working directory is the home directory
					p = src.Global.Path
				}
				fmt.Fprintln(s.out, p)
			default:
				fmt.Fprintf(s.out, "global:  %s\n", src.Global.Path)
				if src.Project.Path != "" {
					fmt.Fprintf(s.out, "project: %s\n", src.Project.Path)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&global, "global", false, "print only the global file's path")
	cmd.Flags().BoolVar(&project, "project", false, "print only the project file's path")
	cmd.MarkFlagsMutuallyExclusive("global", "project")
	return cmd
}

// loadSettings loads the effective settings for a command: warnings go to
// stderr, invalid settings become exit status 2.
func loadSettings(s streams) (*settings.Settings, error) {
	src, err := settingsSources()
	if err != nil {
		return nil, err
	}
	st, warns, err := settings.Load(src)
	printWarnings(s, warns)
	if err != nil {
		if errors.Is(err, settings.ErrInvalid) {
			return nil, &exitError{exitInvalid, list(err)}
		}
		return nil, err
	}
	return st, nil
}

// settingsSources locates the settings files of this process.
func settingsSources() (settings.Sources, error) {
	home, herr := os.UserHomeDir()
	if herr != nil && os.Getenv("RALLY_HOME") == "" {
		return settings.Sources{}, fmt.Errorf("settings: no home directory (%w); set RALLY_HOME", herr)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return settings.Sources{}, fmt.Errorf("settings: %w", err)
	}
	return settings.Locate(home, cwd, os.Getenv), nil
}

func printWarnings(s streams, warns []settings.Warning) {
	for _, w := range warns {
		fmt.Fprintln(s.err, "rally: warning:", w)
	}
}

// listError prints several settings problems one per line, each with the
// "rally: " prefix that Main gives the first.
type listError struct{ err error }

func list(err error) error { return listError{err} }

func (e listError) Error() string {
	return strings.ReplaceAll(e.err.Error(), "\n", "\nrally: ")
}

func (e listError) Unwrap() error { return e.err }

// oneLine compacts indented JSON for a confirmation message.
func oneLine(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}
