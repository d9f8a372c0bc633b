// Package auth holds rally's credentials (README, "Credentials, usage
// limits and fallback models"): several
// API keys per provider in $RALLY_HOME/auth.json, the usual environment
// variables as implicit credentials, usage-limit marks that every rally
// process on the machine shares, and the Rotation that moves a session to
// another credential or a fallback model when its key is exhausted.
//
// auth.json (mode 0600; rally refuses a file others can read):
//
//	{
//	  "providers": {
//	    "openai": [
//	      {"id": "work", "label": "team plan", "key": "sk-…"},
//	      {"id": "personal", "keyEnv": "OPENAI_PERSONAL_KEY"}
//	    ]
//	  }
//	}
//
// A session tries a provider's credentials in the order of Pool: the
// environment first (RALLY_API_KEY for the run's own provider, then the
// provider's apiKeyEnv), then auth.json in file order. The key rally used
// before there was an auth.json stays the first choice; the file adds more.
package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rally-agent/rally/internal/regfile"
)

// EnvPrefix starts the id of an implicit credential, one that comes from an
// environment variable ("env:OPENAI_API_KEY"). File credentials may not use it.
const EnvPrefix = "env:"

// Errors callers match with errors.Is.
var (
	// ErrInsecure: auth.json is readable by group or others (see PermError).
	ErrInsecure = errors.New("auth: credentials file is readable by others")
	// ErrExists: a provider already has a credential with that id.
	ErrExists = errors.New("auth: credential id already exists")
	// ErrNotFound: no credential with that provider and id.
	ErrNotFound = errors.New("auth: no such credential")
)

// PermError refuses an auth.json that group or others can read: the keys in
// it are as good as published on a shared machine.
type PermError struct {
	Path string
	Mode fs.FileMode
}

func (e *PermError) Error() string {
	return fmt.Sprintf("auth: %s is readable by group or others (mode %04o); fix it with: chmod 600 %s", e.Path, e.Mode.Perm(), e.Path)
}

// Is makes errors.Is(err, ErrInsecure) true.
func (e *PermError) Is(target error) bool { return target == ErrInsecure }

// Credential is one API key of a provider: the key itself (Key) or the
// name of the environment variable holding it (KeyEnv). The zero
// Credential stands for "no key" (sim, a local server): it is always usable
// and never marked.
//
// String, GoString and LogValue print only the id, so logging or printing a
// Credential cannot leak its key.
type Credential struct {
	ID     string `json:"id"`
	Label  string `json:"label,omitempty"`
	Key    string `json:"key,omitempty"`
	KeyEnv string `json:"keyEnv,omitempty"`
}

func (c Credential) String() string {
	if c.ID == "" {
		return "no key"
	}
	return c.ID
}

// GoString keeps %#v from printing the key.
func (c Credential) GoString() string { return fmt.Sprintf("auth.Credential{ID: %q}", c.ID) }

// LogValue logs the id only.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Implicit reports whether the credential comes from the environment
// rather than auth.json.
func (c Credential) Implicit() bool { return strings.HasPrefix(c.ID, EnvPrefix) }

// Secret returns the key: Key, else the value of KeyEnv.
func (c Credential) Secret(getenv func(string) string) string {
	if c.Key != "" {
		return c.Key
	}
	if c.KeyEnv != "" {
		return getenv(c.KeyEnv)
	}
	return ""
}

// Source says where the key comes from, for humans: "auth.json",
// "auth.json ($VAR)" or "$VAR".
func (c Credential) Source() string {
	switch {
	case c.Implicit():
		return "$" + c.KeyEnv
	case c.KeyEnv != "":
		return "auth.json ($" + c.KeyEnv + ")"
	case c.Key != "":
		return "auth.json"
	}
	return "none"
}

// File is the content of auth.json.
type File struct {
	// Providers maps a provider name (as in settings, or as given with
	// --provider for a one-run provider) to its credentials, in the order
	// they are tried.
	Providers map[string][]Credential `json:"providers"`
}

// maxFileBytes caps what Load reads: thousands of credentials fit in it, a
// link to /dev/zero does not.
const maxFileBytes = 4 << 20

// Path is auth.json in rally's home directory.
func Path(home string) string { return filepath.Join(home, "auth.json") }

// Load reads auth.json. A missing file is an empty File; a file that group
// or others can read is refused with a *PermError.
func Load(path string) (*File, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Providers: map[string][]Credential{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &PermError{Path: path, Mode: fi.Mode()}
	}
	b, err := regfile.Read(path, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return parse(path, b)
}

func parse(path string, b []byte) (*File, error) {
	f := &File{}
	if len(bytes.TrimSpace(b)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(b))
		// Strict, because rally rewrites this file on add and remove: a
		// field it does not know would be silently dropped.
		dec.DisallowUnknownFields()
		if err := dec.Decode(f); err != nil {
			// The decoder's message quotes no values, only names and
			// offsets, so it cannot leak a key.
			return nil, fmt.Errorf("auth: %s: %w", path, err)
		}
	}
	if f.Providers == nil {
		f.Providers = map[string][]Credential{}
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	return f, nil
}

func (f *File) validate() error {
	for p, cs := range f.Providers {
		seen := map[string]bool{}
		for i, c := range cs {
			if err := check(c); err != nil {
				return fmt.Errorf("providers.%s[%d]: %w", p, i, err)
			}
			if seen[c.ID] {
				return fmt.Errorf("providers.%s[%d]: id %q is used twice", p, i, c.ID)
			}
			seen[c.ID] = true
		}
	}
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// check validates one file credential.
func check(c Credential) error {
	switch {
	case c.ID == "":
		return errors.New("id is empty")
	case strings.HasPrefix(c.ID, EnvPrefix):
		return fmt.Errorf("id %q: ids starting with %q are reserved for environment variables", c.ID, EnvPrefix)
	case strings.ContainsAny(c.ID, " \t\n/"):
		return fmt.Errorf("id %q: no spaces or slashes (a slash would read as provider/model)", c.ID)
	case (c.Key == "") == (c.KeyEnv == ""):
		return fmt.Errorf("credential %q: give exactly one of key and keyEnv", c.ID)
	case c.KeyEnv != "" && !envName.MatchString(c.KeyEnv):
		return fmt.Errorf("credential %q: keyEnv %q is not an environment variable name", c.ID, c.KeyEnv)
	}
	return nil
}

// Add appends a credential to provider's list.
func (f *File) Add(provider string, c Credential) error {
	if provider == "" || strings.ContainsAny(provider, " /") {
		return fmt.Errorf("auth: provider %q: want a provider name such as openai", provider)
	}
	if err := check(c); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	for _, have := range f.Providers[provider] {
		if have.ID == c.ID {
			return fmt.Errorf("%w: %s %s (remove it first: rally auth remove %s %s)", ErrExists, provider, c.ID, provider, c.ID)
		}
	}
	if f.Providers == nil {
		f.Providers = map[string][]Credential{}
	}
	f.Providers[provider] = append(f.Providers[provider], c)
	return nil
}

// Remove deletes provider's credential id.
func (f *File) Remove(provider, id string) error {
	cs := f.Providers[provider]
	for i, c := range cs {
		if c.ID == id {
			cs = append(cs[:i:i], cs[i+1:]...)
			if len(cs) == 0 {
				delete(f.Providers, provider)
			} else {
				f.Providers[provider] = cs
			}
			return nil
		}
	}
	if strings.HasPrefix(id, EnvPrefix) {
		return fmt.Errorf("%w: %s %s comes from the environment; unset $%s instead", ErrNotFound, provider, id, strings.TrimPrefix(id, EnvPrefix))
	}
	return fmt.Errorf("%w: %s %s", ErrNotFound, provider, id)
}

// Save writes the file atomically with mode 0600.
func (f *File) Save(path string) error {
	if err := f.validate(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return writeFile(path, append(b, '\n'))
}

// Pool returns provider's usable credentials in the order a session tries
// them: one implicit credential per set variable of env (in that order,
// ids "env:VAR"), then the file's credentials whose key is not empty. Key
// is filled in on every returned credential; KeyEnv still says where it
// came from. The same key may appear twice (in the environment and the
// file); a mark on it blocks both, since marks follow the key.
func (f *File) Pool(provider string, env []string, getenv func(string) string) []Credential {
	var out []Credential
	seen := map[string]bool{}
	for _, v := range env {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		if k := getenv(v); k != "" {
			out = append(out, Credential{ID: EnvPrefix + v, Key: k, KeyEnv: v})
		}
	}
	for _, c := range f.Providers[provider] {
		if k := c.Secret(getenv); k != "" {
			c.Key = k
			out = append(out, c)
		}
	}
	return out
}
