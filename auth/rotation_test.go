package auth

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// stub is a provider client that only remembers its key.
type stub struct{ key string }

func (s *stub) Stream(context.Context, *llm.Request) (*llm.Stream, error) {
	return nil, errors.New("stub")
}

func usageLimit(msg string) error {
	return &llm.APIError{Provider: "openai", StatusCode: 429, Type: "usage_limit_reached", Code: "usage_limit_reached", Message: msg}
}

func overloaded() error {
	return &llm.APIError{Provider: "openai", StatusCode: 503, Type: "server_error", Message: "overloaded"}
}

// rig is a Rotation over a FileMarks in a temporary directory, on a
// settable clock.
type rig struct {
	clk   *clock
	marks *FileMarks
	creds map[string][]Credential
	cfg   Config
}

func newRig(t *testing.T, fallbacks ...string) *rig {
	r := &rig{clk: newClock(), creds: map[string][]Credential{
		"openai": {{ID: "a", Key: keyA}, {ID: "b", Key: keyB}},
		"backup": {{ID: "c", Key: "sk-test-CCCCCCCCCCCCCCCCCCCC3333"}},
		"local":  {{}},
		"empty":  nil,
	}}
	r.marks = &FileMarks{Path: filepath.Join(t.TempDir(), "auth-marks.json"), Now: r.clk.now}
	r.cfg = Config{
		Marks: r.marks,
		Credentials: func(p string) ([]Credential, error) {
			cs, ok := r.creds[p]
			if !ok {
				return nil, fmt.Errorf("unknown provider %q", p)
			}
			return cs, nil
		},
		Connect: func(p, m, key string) (llm.Provider, llm.Model, error) {
			return &stub{key: key}, llm.Model{Provider: p, ID: m}, nil
		},
		Fallbacks: fallbacks,
		Now:       r.clk.now,
	}
	return r
}

// rotation is a fresh Rotation: a new session, or a new rally process,
// sharing the rig's marks.
func (r *rig) rotation() *Rotation { return New(r.cfg) }

func keyOf(t llm.Target) string {
	if t.Provider == nil {
		return "<none>"
	}
	return t.Provider.(*stub).key
}

func describe(t llm.Target, ok bool) string {
	if !ok {
		return "no switch"
	}
	return fmt.Sprintf("%s %s/%s %s", t.Name, t.Model.Provider, t.Model.ID, keyOf(t)[len(keyOf(t))-4:])
}

func TestRotationOnUsageLimit(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, "nowhere/x", "empty/x", "openai/m", "backup/m2")
	rot := r.rotation()
	start, err := rot.Start(ctx, "openai", "m")
	must(t, err)
	if got := describe(start, true); got != "a openai/m 1111" {
		t.Fatalf("start %s", got)
	}

	// A gets a usage limit with a 5 h reset: marked, and the session moves to B.
	to, ok := rot.Switch(ctx, start, report(usageLimit("limit reached for "+keyA+", also echoed in part as zz"+keyA[8:20]+"***"), 5*time.Hour))
	if got := describe(to, ok); got != "b openai/m 2222" {
		t.Fatalf("after A's limit: %s", got)
	}
	ms, err := r.marks.Blocked(ctx, "openai")
	must(t, err)
	if len(ms) != 1 || ms[0].ID != "a" || !ms[0].Until.Equal(r.clk.t.Add(5*time.Hour)) || ms[0].Key != Fingerprint(keyA) {
		t.Fatalf("marks %+v", ms)
	}
	// The reason goes through the one redactor (internal/redact): whole and
	// partial echoes of the key are gone.
	if strings.Contains(ms[0].Reason, "AAAA") || !strings.Contains(ms[0].Reason, "429") {
		t.Errorf("reason %q", ms[0].Reason)
	}

	// A second process starts on B at once.
	if got := describe(must2(r.rotation().Start(ctx, "openai", "m")), true); got != "b openai/m 2222" {
		t.Errorf("a new session starts on %s, want b", got)
	}

	// B's limit has no stated reset: blocked for DefaultBlock, and the
	// first fallback that works answers (nowhere is unknown, empty has no
	// key, openai/m is where we are).
	to, ok = rot.Switch(ctx, to, report(usageLimit("limit"), 0))
	if got := describe(to, ok); got != "backup/m2 backup/m2 3333" {
		t.Fatalf("after B's limit: %s", got)
	}
	until := BlockedUntil(must2(r.marks.Blocked(ctx, "openai")), Credential{ID: "b", Key: keyB})
	if !until.Equal(r.clk.t.Add(DefaultBlock)) {
		t.Errorf("B blocked until %v, want now + %v", until, DefaultBlock)
	}

	// A new session with both blocked starts on the fallback.
	if got := describe(must2(r.rotation().Start(ctx, "openai", "m")), true); got != "backup/m2 backup/m2 3333" {
		t.Errorf("with both blocked a new session starts on %s", got)
	}

	// The fallback is exhausted too: nothing is left.
	if got := describe(rot.Switch(ctx, to, report(usageLimit("limit"), 2*time.Hour))); got != "no switch" {
		t.Errorf("with everything blocked: %s", got)
	}

	// After B's reset, B is back; after A's, A is first again.
	r.clk.advance(DefaultBlock + time.Second)
	if got := describe(must2(r.rotation().Start(ctx, "openai", "m")), true); got != "b openai/m 2222" {
		t.Errorf("after B's reset: %s", got)
	}
	r.clk.advance(4 * time.Hour)
	if got := describe(must2(r.rotation().Start(ctx, "openai", "m")), true); got != "a openai/m 1111" {
		t.Errorf("after A's reset: %s", got)
	}
}

func TestRotationStartAllBlocked(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	must(t, r.marks.Block(ctx, Mark{Provider: "openai", ID: "a", Key: Fingerprint(keyA), Until: r.clk.t.Add(3 * time.Hour)}))
	must(t, r.marks.Block(ctx, Mark{Provider: "openai", ID: "b", Key: Fingerprint(keyB), Until: r.clk.t.Add(time.Hour)}))
	// No fallback: the credential whose block ends first, and the
	// provider decides.
	if got := describe(must2(r.rotation().Start(ctx, "openai", "m")), true); got != "b openai/m 2222" {
		t.Errorf("start %s, want b (resets first)", got)
	}
}

func TestRotationTransientNeverRotates(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		fallbacks []string
		want      string
	}{
		{"no fallback", nil, "no switch"},
		{"fallback", []string{"backup/m2"}, "backup/m2 backup/m2 3333"},
		{"keyless fallback", []string{"local/llama"}, "local/llama local/llama "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.fallbacks...)
			rot := r.rotation()
			start := must2(rot.Start(ctx, "openai", "m"))
			// A too-long wait on a transient error: no mark, no other
			// credential of the provider; a fallback model if there is one.
			to, ok := rot.Switch(ctx, start, report(overloaded(), 5*time.Hour))
			got := "no switch"
			if ok {
				k := keyOf(to)
				got = fmt.Sprintf("%s %s/%s %s", to.Name, to.Model.Provider, to.Model.ID, k[max(0, len(k)-4):])
			}
			if got != tt.want {
				t.Errorf("switch %q, want %q", got, tt.want)
			}
			if ms := must2(r.marks.Blocked(ctx, "")); len(ms) != 0 {
				t.Errorf("a transient error marked %+v", ms)
			}
		})
	}
}

// TestRotationForeignClient: after SetModel installed a client the
// rotation did not make, a usage limit marks nothing (the key is unknown)
// but still moves on.
func TestRotationForeignClient(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	rot := r.rotation()
	must2(rot.Start(ctx, "openai", "m"))
	foreign := llm.Target{Provider: &stub{key: keyB}, Model: llm.Model{Provider: "openai", ID: "m2"}}
	to, ok := rot.Switch(ctx, foreign, report(usageLimit("limit"), time.Hour))
	if got := describe(to, ok); got != "a openai/m2 1111" {
		t.Errorf("switch %s", got)
	}
	if ms := must2(r.marks.Blocked(ctx, "")); len(ms) != 0 {
		t.Errorf("marked %+v for a client of unknown key", ms)
	}
}

// failing is a Marks store that is down.
type failing struct{}

func (failing) Block(context.Context, Mark) error { return errors.New("store down") }
func (failing) Blocked(context.Context, string) ([]Mark, error) {
	return nil, errors.New("store down")
}

// TestRotationStoreDown: without a working store the session still never
// goes back to the key it saw exhausted.
func TestRotationStoreDown(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.cfg.Marks = failing{}
	rot := r.rotation()
	a := must2(rot.Start(ctx, "openai", "m"))
	b, ok := rot.Switch(ctx, a, report(usageLimit("limit"), time.Hour))
	if got := describe(b, ok); got != "b openai/m 2222" {
		t.Fatalf("switch %s", got)
	}
	if got := describe(rot.Switch(ctx, b, report(usageLimit("limit"), time.Hour))); got != "no switch" {
		t.Errorf("second switch %s, want none (A is blocked locally)", got)
	}
}

// TestRotationWrappedClient: a client the session wrapped (a logging or
// fault-injecting provider around the one handed out) is still known by
// its Ref, so its credential is marked.
func TestRotationWrappedClient(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	rot := r.rotation()
	a := must2(rot.Start(ctx, "openai", "m"))
	a.Provider = wrapped{a.Provider}
	b, ok := rot.Switch(ctx, a, report(usageLimit("limit"), time.Hour))
	if got := describe(b, ok); got != "b openai/m 2222" {
		t.Fatalf("switch %s", got)
	}
	if ms := must2(r.marks.Blocked(ctx, "openai")); len(ms) != 1 || ms[0].ID != "a" {
		t.Errorf("marks %+v, want A marked", ms)
	}
}

type wrapped struct{ llm.Provider }

// report is what the session hands Switch for err, with the hint given.
func report(err error, hint time.Duration) retry.Report {
	r := retry.Inspect(err, time.Now())
	r.Hint = hint
	return r
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
