package fleet_test

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/retry"
)

// TestLearnedResetShared: a reset one rally was told for a key reaches
// another process through Redis alone (no local file), so its limit that
// states no reset can be waited out to it.
func TestLearnedResetShared(t *testing.T) {
	srv := redistest.Start(t)
	rotation := func() *auth.Rotation {
		return auth.New(auth.Config{
			Marks:       &fleet.Marks{Fleet: open(t, srv.URL, nil)},
			Credentials: func(string) ([]auth.Credential, error) { return []auth.Credential{{ID: "work", Key: key1}}, nil },
			Connect: func(p, m, key string) (llm.Provider, llm.Model, error) {
				return &openai.Completions{}, llm.Model{Provider: p, ID: m}, nil
			},
		})
	}
	ctx := t.Context()
	limit := &llm.APIError{Provider: "acme", StatusCode: 429, Type: "usage_limit_reached", Code: "usage_limit_reached", Message: "plan limit"}
	first := rotation()
	from, err := first.Start(ctx, "acme", "m")
	if err != nil {
		t.Fatal(err)
	}
	rep := retry.Inspect(limit, time.Now())
	rep.Hint = 2 * time.Hour
	first.Switch(ctx, from, rep)
	want := time.Now().Add(2 * time.Hour)

	second := rotation()
	to, err := second.Start(ctx, "acme", "m")
	if err != nil {
		t.Fatal(err)
	}
	got := second.LearnedReset(ctx, to)
	if d := got.Sub(want); d > 0 || d < -time.Second {
		t.Fatalf("the second process learned %v, want about %v", got, want)
	}
}
