package fleet_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/redis/go-redis/v9"
)

// TestStatusReadsPastForeignKeys: a key under rally's prefixes that holds
// something other than a hash (another program's, or one made by hand)
// is named in Status.Skipped, and the rest of the state is still read.
// Bug caught: HGETALL's WRONGTYPE reply returned as the error, so one
// stray key made `rally fleet status` fail outright.
func TestStatusReadsPastForeignKeys(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	foreign := []string{"rally:breaker:acme:m2", "rally:cool:acme:zz"}
	if err := rdb.Set(t.Context(), foreign[1], "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.RPush(t.Context(), foreign[0], "x").Err(); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded, Header: map[string]string{"retry-after": "60"}},
		llmtest.Step{Text: "ok"})
	f := open(t, rs.URL, nil)
	ask(t.Context(), gate(f, fake, key1))
	st, err := f.Status(t.Context(), nil)
	if err != nil {
		t.Fatalf("status with foreign keys: %v", err)
	}
	if len(st.Cooldowns) != 1 || st.Cooldowns[0].Fingerprint != auth.Fingerprint(key1) || st.Cooldowns[0].Status != http.StatusServiceUnavailable {
		t.Errorf("cooldowns %+v, want key1's 503", st.Cooldowns)
	}
	slices.Sort(st.Skipped)
	if !slices.Equal(st.Skipped, foreign) {
		t.Errorf("skipped %q, want %q", st.Skipped, foreign)
	}
}
