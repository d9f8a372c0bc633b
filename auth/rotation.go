package auth

import (
	"context"
	"github.com/rally-agent/rally/internal/redact"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Config is what a Rotation needs from the program that embeds it.
type Config struct {
	// Marks is the shared store of usage-limit marks.
	Marks Marks
	// Credentials returns provider's credentials in the order they are
	// tried, with Key filled in (as File.Pool returns them). A provider
	// that works without a key returns []Credential{{}}. An empty list
	// means the provider has no key: as the session's own provider it is
	// used without one (its error then says what is missing); as a
	// fallback it is skipped.
	Credentials func(provider string) ([]Credential, error)
	// Connect opens a client for provider's model with key ("" for none).
	Connect func(provider, model, key string) (llm.Provider, llm.Model, error)
	// Fallbacks are "provider/model" references, tried in order when a
	// usage limit or a too-long wait leaves the session's provider with no
	// usable credential.
	Fallbacks []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Log receives what the rotation does (never a key); nil discards it.
	Log *slog.Logger
}

// Rotation chooses the credential and model of one session and moves it on
// a usage limit. It implements the session's Switcher (package session
// owns that interface; auth needs nothing of it). A session keeps its
// credential while it works: only a usage limit marks and rotates it; a
// transient error with a too-long wait may move the session to a fallback
// model, but never marks or rotates a credential.
type Rotation struct {
	cfg Config

	mu sync.Mutex
	// issued is every Target handed out, by its Ref, so Switch knows which
	// credential a failed call used whatever wraps the client.
	issued map[string]issued
	// local holds the marks this rotation made, so a store that failed to
	// record one cannot send the session back to the exhausted key.
	local []Mark
}

// issued is what a Target's Ref stands for.
type issued struct {
	provider, model string
	cred            Credential
}

// New returns a Rotation.
func New(cfg Config) *Rotation { return &Rotation{cfg: cfg, issued: map[string]issued{}} }

func (r *Rotation) now() time.Time {
	if r.cfg.Now != nil {
		return r.cfg.Now()
	}
	return time.Now()
}

func (r *Rotation) log() *slog.Logger {
	if r.cfg.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.cfg.Log
}

// Start picks what a session on provider's model uses: the first
// credential no mark blocks. When every one is blocked it starts on the
// first fallback model with a usable credential (Target.Name is then
// "provider/model"); failing that, on the credential whose block ends
// first, and the provider's answer decides (a mark can be stale, e.g.
// after a plan upgrade). Target.Name is otherwise the credential's id, ""
// for no key.
func (r *Rotation) Start(ctx context.Context, provider, model string) (llm.Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	creds, err := r.cfg.Credentials(provider)
	if err != nil {
		return llm.Target{}, err
	}
	if len(creds) == 0 {
		creds = []Credential{{}}
	}
	marks := r.blocked(ctx, provider)
	for _, c := range creds {
		if BlockedUntil(marks, c).IsZero() {
			return r.open(provider, model, c, c.ID)
		}
	}
	if t, ok := r.fallback(ctx, provider, model); ok {
		r.log().Warn("auth: every credential is blocked by a usage limit; starting on a fallback model",
			"provider", provider, "fallback", t.Name)
		return t, nil
	}
	first := creds[0]
	for _, c := range creds[1:] {
		if BlockedUntil(marks, c).Before(BlockedUntil(marks, first)) {
			first = c
		}
	}
	r.log().Warn("auth: every credential is blocked by a usage limit; trying the one that resets first",
		"provider", provider, "credential", first, "blockedUntil", BlockedUntil(marks, first))
	return r.open(provider, model, first, first.ID)
}

// Switch implements the session's Switcher: on a usage limit it marks the
// failed call's credential (from.Ref) as blocked until now + failure.Hint
// (DefaultBlock without a hint) and moves to the provider's next unblocked
// credential; otherwise, or when there is none, to the first fallback
// model with an unblocked credential. ok is false when nothing is left.
func (r *Rotation) Switch(ctx context.Context, from llm.Target, failure retry.Report) (llm.Target, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.issued[from.Ref]
	if !ok {
		// A client the rotation did not hand out: the credential it used
		// is unknown, so nothing is marked.
		c = issued{provider: from.Model.Provider, model: from.Model.ID}
	}
	return r.switchFrom(ctx, c, failure)
}

func (r *Rotation) switchFrom(ctx context.Context, from issued, failure retry.Report) (llm.Target, bool) {
	if failure.Class != retry.UsageLimit {
		return r.toFallback(ctx, from)
	}
	creds, err := r.cfg.Credentials(from.provider)
	if err != nil {
		r.log().Warn("auth: credentials", "provider", from.provider, "err", err)
	}
	if from.cred.ID != "" && from.cred.Key != "" {
		r.block(ctx, from, failure, creds)
	}
	marks := r.blocked(ctx, from.provider)
	for _, c := range creds {
		if c.ID == "" || (c.ID == from.cred.ID && c.Key == from.cred.Key) || !BlockedUntil(marks, c).IsZero() {
			continue
		}
		t, err := r.open(from.provider, from.model, c, c.ID)
		if err != nil {
			r.log().Warn("auth: cannot open client", "provider", from.provider, "credential", c, "err", err)
			continue
		}
		r.log().Warn("auth: usage limit: switching credential", "provider", from.provider, "from", from.cred, "to", c)
		return t, true
	}
	return r.toFallback(ctx, from)
}

func (r *Rotation) toFallback(ctx context.Context, from issued) (llm.Target, bool) {
	t, ok := r.fallback(ctx, from.provider, from.model)
	if ok {
		r.log().Warn("auth: switching to a fallback model", "from", from.provider+"/"+from.model, "to", t.Name)
	}
	return t, ok
}

// block marks the failed call's credential in the store and locally.
func (r *Rotation) block(ctx context.Context, from issued, failure retry.Report, creds []Credential) {
	now := r.now()
	hint, reset := failure.Hint, now.Add(failure.Hint)
	if hint <= 0 {
		// Said nothing: block for DefaultBlock, and keep what an earlier
		// limit said, which a mark with a later end would otherwise drop.
		hint, reset = DefaultBlock, r.learnedReset(ctx, from)
	}
	secrets := []string{from.cred.Key}
	for _, c := range creds {
		secrets = append(secrets, c.Key)
	}
	m := Mark{Provider: from.provider, ID: from.cred.ID, Key: Fingerprint(from.cred.Key), Until: now.Add(hint), Reset: reset, Reason: redact.Line(failure.Message, secrets...)}
	r.local = append(r.local, m)
	if r.cfg.Marks == nil {
		return
	}
	if err := r.cfg.Marks.Block(ctx, m); err != nil {
		r.log().Warn("auth: cannot record usage-limit mark; other rally processes will not see it", "provider", m.Provider, "credential", m.ID, "err", err)
		return
	}
	r.log().Info("auth: credential blocked by a usage limit", "provider", m.Provider, "credential", m.ID, "until", m.Until)
}

// fallback moves to the first fallback model, other than the one that
// failed, that has an unblocked credential.
func (r *Rotation) fallback(ctx context.Context, provider, model string) (llm.Target, bool) {
	for _, ref := range r.cfg.Fallbacks {
		p, m, ok := strings.Cut(ref, "/")
		if !ok || p == "" || m == "" || (p == provider && m == model) {
			continue
		}
		creds, err := r.cfg.Credentials(p)
		if err != nil {
			r.log().Warn("auth: fallback skipped", "fallback", ref, "err", err)
			continue
		}
		marks := r.blocked(ctx, p)
		for _, c := range creds {
			if !BlockedUntil(marks, c).IsZero() {
				continue
			}
			t, err := r.open(p, m, c, ref)
			if err != nil {
				r.log().Warn("auth: fallback skipped", "fallback", ref, "err", err)
				break
			}
			return t, true
		}
	}
	return llm.Target{}, false
}

// open connects and records what the Target's Ref stands for.
func (r *Rotation) open(provider, model string, c Credential, name string) (llm.Target, error) {
	p, m, err := r.cfg.Connect(provider, model, c.Key)
	if err != nil {
		return llm.Target{}, err
	}
	ref := strconv.Itoa(len(r.issued) + 1)
	r.issued[ref] = issued{provider: provider, model: m.ID, cred: c}
	return llm.Target{Provider: p, Model: m, Name: name, Ref: ref}, nil
}

// blocked returns provider's live marks from the store and from this
// rotation. A store that cannot be read counts as holding no marks: the
// provider will say again what is exhausted.
func (r *Rotation) blocked(ctx context.Context, provider string) []Mark {
	var marks []Mark
	if r.cfg.Marks != nil {
		ms, err := r.cfg.Marks.Blocked(ctx, provider)
		if err != nil {
			r.log().Warn("auth: cannot read usage-limit marks", "err", err)
		}
		marks = ms
	}
	now := r.now()
	for _, m := range r.local {
		if m.Provider == provider && m.Until.After(now) {
			marks = append(marks, m)
		}
	}
	return marks
}
