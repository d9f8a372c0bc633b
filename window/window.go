// Package window remembers the context windows that providers state in
// their overflow errors ("This model's maximum context length is 8192
// tokens", "n_ctx (4096)"), per provider, server and model, so that every rally
// process on the machine sizes its context by what the server really
// takes, whatever the catalog or an unknown model's default says.
//
// File keeps them in $RALLY_HOME/context-windows.json, shared by the
// processes of one machine the way auth's usage-limit marks are: writers
// lock the file and replace it whole, readers need no lock. Package fleet
// shares them across machines through Redis.
package window

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/filelock"
	"github.com/rally-agent/rally/retry"
)

// Learned is one window learned from an overflow error.
type Learned struct {
	Provider string `json:"provider"`
	// BaseURL is the server's address as Server gives it: every
	// --base-url run is provider "custom", and one server's window is not
	// another's. Entries written before it was kept have none; they
	// answer only a caller without a base URL, so no other server's window
	// is applied (the next overflow states it again).
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"`
	// Tokens is the window, in tokens, as the provider stated it.
	Tokens int `json:"tokens"`
	// At is when it was learned.
	At time.Time `json:"learnedAt"`
}

// Path is the learned-windows file in the rally home directory.
func Path(home string) string { return filepath.Join(home, "context-windows.json") }

// File keeps learned windows in a JSON file (by default Path(home)). The
// latest window stated for a model replaces an earlier one: a server
// restarted with a larger context says so in its next overflow, and a
// smaller one too. The zero File is not usable: Path is required.
type File struct {
	Path string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

type fileData struct {
	Version int       `json:"version"`
	Windows []Learned `json:"windows"`
}

// Server is the part of a base URL that names the server, for keys:
// scheme, host and path, without a user, query or fragment, which may
// carry a key and say nothing about the server.
func Server(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return strings.TrimRight(u.String(), "/")
}

// Window returns the window learned for provider's model at baseURL, 0
// when none is.
func (f *File) Window(_ context.Context, provider, baseURL, model string) (int, error) {
	all, err := f.read()
	if err != nil {
		return 0, err
	}
	srv := Server(baseURL)
	for _, w := range all {
		if w.Provider == provider && w.BaseURL == srv && w.Model == model {
			return w.Tokens, nil
		}
	}
	return 0, nil
}

// Learn records that provider's model at baseURL has a window of tokens.
func (f *File) Learn(ctx context.Context, provider, baseURL, model string, tokens int) error {
	if provider == "" || model == "" || !retry.PlausibleWindow(tokens) {
		return fmt.Errorf("window: learn: need a provider, a model and a plausible size (got %q, %q, %d)", provider, model, tokens)
	}
	srv := Server(baseURL)
	return f.update(ctx, func(all []Learned) []Learned {
		all = slices.DeleteFunc(all, func(w Learned) bool { return w.Provider == provider && w.BaseURL == srv && w.Model == model })
		return append(all, Learned{Provider: provider, BaseURL: srv, Model: model, Tokens: tokens, At: f.now().UTC()})
	})
}

// Forget drops what was learned for provider's model ("" model: every
// model of provider; "" provider: everything).
func (f *File) Forget(ctx context.Context, provider, model string) error {
	return f.update(ctx, func(all []Learned) []Learned {
		return slices.DeleteFunc(all, func(w Learned) bool {
			return provider == "" || w.Provider == provider && (model == "" || w.Model == model)
		})
	})
}

// All returns every learned window, by provider and model.
func (f *File) All(context.Context) ([]Learned, error) { return f.read() }

func (f *File) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// update applies fn to the file's windows under its lock.
func (f *File) update(ctx context.Context, fn func([]Learned) []Learned) error {
	unlock, err := filelock.Lock(ctx, f.Path+".lock")
	if err != nil {
		return fmt.Errorf("window: %w", err)
	}
	defer unlock()
	// A file that does not parse is started over rather than refused: it
	// is a cache of what servers said, and the next overflow says it again.
	old, _ := f.read()
	all := fn(old)
	slices.SortFunc(all, func(a, b Learned) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.BaseURL, b.BaseURL), cmp.Compare(a.Model, b.Model))
	})
	if err := filelock.WriteJSON(f.Path, fileData{Version: 1, Windows: all}); err != nil {
		return fmt.Errorf("window: %w", err)
	}
	return nil
}

func (f *File) read() ([]Learned, error) {
	var d fileData
	if err := filelock.ReadJSON(f.Path, &d); err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	// The file is local input like any other: a window no overflow could
	// state (1, say, which would refuse every prompt) is not used.
	return slices.DeleteFunc(d.Windows, func(w Learned) bool { return !retry.PlausibleWindow(w.Tokens) }), nil
}
