// Package tool defines what the agent loop executes when the model calls a
// tool, and the built-in tools read, write, edit and bash.
//
// Every built-in tool works relative to a directory (its Dir field): a
// relative path is joined to Dir, an absolute path is used as it is, and a
// leading "~" is the user's home directory. An empty Dir means the process's
// working directory.
//
// Errors follow one convention: a Run error means the tool could not do what
// was asked (bad arguments, a missing file, an ambiguous edit); the agent
// turns it into a tool result with isError true and the error text, so the
// text is written for the model to read and act on. A tool that ran but
// failed in its own terms (a command that exited non-zero, timed out) returns
// a Result with IsError set instead, because its output is still useful.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/rally-agent/rally/llm"
)

// Tool is something the model can call.
type Tool interface {
	// Spec is the name, description and JSON Schema of the arguments, as
	// sent to the model.
	Spec() llm.Tool
	// Run executes one call with the model's arguments (a JSON object).
	// It returns promptly once ctx is done.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what a tool gives back to the model.
type Result struct {
	Content []llm.Content // text (and images) for the model
	IsError bool
}

// Func adapts a function to a Tool, for custom tools registered by library
// users.
type Func struct {
	Def llm.Tool
	Fn  func(ctx context.Context, args json.RawMessage) (Result, error)
}

// Spec returns f.Def.
func (f Func) Spec() llm.Tool { return f.Def }

// Run calls f.Fn.
func (f Func) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	if f.Fn == nil {
		return Result{}, fmt.Errorf("%s: tool has no function", f.Def.Name)
	}
	return f.Fn(ctx, args)
}

// Default caps on what one call returns to the model (Options, Read,
// Bash): a long log or a whole source file fits, and one cat of a big file
// cannot fill a context window.
const (
	DefaultMaxBytes = 50 << 10
	DefaultMaxLines = 2000
)

// Options configure the built-in tools beyond their directory. The zero
// Options are the defaults: the caps above, the process's environment, no
// file refused, nothing redacted, no process tracking.
type Options struct {
	// MaxBytes and MaxLines cap the output of read and bash and the diff
	// of edit; 0 means the defaults.
	MaxBytes, MaxLines int
	// Env is the environment of bash commands; nil is the process's.
	// A program removes its secrets from it (see Bash.Env).
	Env []string
	// Deny lists files that no tool reads or writes, such as a
	// credentials file; a call that names one gets an error result.
	Deny []string
	// Redact, when set, rewrites every text a tool returns, output and
	// error messages alike, before the agent stores, emits or sends it:
	// the program fills it with its secret redactor.
	Redact func(string) string
	// Procs, when set, records bash's process groups so the program can
	// kill what is left of them when it exits (Procs.Kill).
	Procs *Procs
	// Start, when set, starts bash's commands (see Bash.Start).
	Start func(cmd *exec.Cmd) (wait func() error, err error)
}

// Builtin returns read, write, edit and bash working in dir, with default
// limits.
func Builtin(dir string) []Tool { return New(dir, Options{}) }

// New returns read, write, edit and bash working in dir, configured by o.
func New(dir string, o Options) []Tool {
	tools := []Tool{
		Read{Dir: dir, MaxLines: o.MaxLines, MaxBytes: o.MaxBytes, Deny: o.Deny},
		Write{Dir: dir, Deny: o.Deny},
		Edit{Dir: dir, MaxDiffBytes: o.MaxBytes, Deny: o.Deny},
		Bash{Dir: dir, MaxOutput: o.MaxBytes, MaxLines: o.MaxLines, Env: o.Env, Deny: o.Deny, Procs: o.Procs, Start: o.Start},
	}
	if o.Redact != nil {
		for i, t := range tools {
			tools[i] = Redacting(t, o.Redact)
		}
	}
	return tools
}

// Redacting returns t with fn applied to every text it returns: the text
// blocks of its results and the message of its errors.
func Redacting(t Tool, fn func(string) string) Tool { return redacting{t, fn} }

type redacting struct {
	Tool
	fn func(string) string
}

func (r redacting) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	res, err := r.Tool.Run(ctx, args)
	if err != nil {
		return Result{}, &redactedError{msg: r.fn(err.Error()), err: err}
	}
	content := make([]llm.Content, len(res.Content))
	for i, c := range res.Content {
		if c.Type == llm.TextType {
			c.Text = r.fn(c.Text)
		}
		content[i] = c
	}
	res.Content = content
	return res, nil
}

// redactedError keeps the cause for errors.Is (an abort stays an abort)
// while its message is the redacted one.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// text is a Result holding one text block.
func text(s string) Result { return Result{Content: []llm.Content{llm.Text(s)}} }

// CheckArgs reports arguments that are not a JSON object, in the words
// every tool uses for them ("bash: arguments are not valid JSON: …"); nil
// for an object or none at all. The agent asks it before running a call
// whose streamed arguments did not parse, so no tool runs on a guess.
func CheckArgs(name string, args json.RawMessage) error {
	var obj map[string]json.RawMessage
	return decode(name, args, &obj)
}

// decode unmarshals the model's arguments into v (a pointer to a struct)
// and turns encoding/json's errors into messages that name the field and
// the expected JSON type, since the model has to fix its call from them.
// Empty arguments count as {} so that a missing field is reported as such.
func decode(name string, args json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	err := json.Unmarshal(args, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%s: arguments are not valid JSON: %v", name, err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("%s: arguments must be a JSON object, not %s", name, typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("%s: %q must be %s, not %s", name, typ.Field, jsonType(typ.Type), typ.Value)
	}
	return fmt.Errorf("%s: bad arguments: %v", name, err)
}

// jsonType names a Go type the way a JSON Schema would.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// pick returns the first non-nil of a field and its aliases, and fails
// when the aliases disagree, because guessing which one the model meant
// could edit the wrong text.
func pick(name, field string, vals map[string]*string, order ...string) (*string, error) {
	var got *string
	var from string
	for _, k := range order {
		v := vals[k]
		if v == nil {
			continue
		}
		if got != nil && *got != *v {
			return nil, fmt.Errorf("%s: both %q and %q are given and differ; give only %q", name, from, k, field)
		}
		if got == nil {
			got, from = v, k
		}
	}
	return got, nil
}

// resolve makes the model's path absolute: "~" and "~/…" are the home
// directory, a relative path is taken relative to dir.
func resolve(name, dir, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s: \"path\" is empty", name)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: cannot expand ~: %v", name, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Clean(p), nil
}

// fsError rewords the common file errors for the model; os errors carry
// the syscall name ("open /x: no such file or directory"), which is noise.
func fsError(name, path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %s: no such file or directory", name, path)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %s: permission denied", name, path)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// size formats a byte count for people and models.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// plural returns "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
