package fleet

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/redis/go-redis/v9"
)

// Status is what the fleet shares right now, as `rally fleet status` shows
// it: fingerprints and credential ids, never a key.
type Status struct {
	Marks     []auth.Mark
	Cooldowns []Cooldown
	Budgets   []BudgetState
	Breakers  []BreakerState
	// Skipped are keys under rally's prefixes that hold something other
	// than a hash: not rally's (another program, a hand-made key). Status
	// reads past them rather than failing, and names them.
	Skipped []string
}

// Cooldown is one credential held back by a server's hint.
type Cooldown struct {
	Provider, Fingerprint string
	Until                 time.Time
	Status                int
}

// BudgetState is what is left of one credential's budget.
type BudgetState struct {
	Provider, Fingerprint string
	// Requests and Tokens are what may be sent at once now (negative:
	// requests are queued for later), as of Redis's last update plus the
	// refill since; NaN when that limit is not set.
	Requests, Tokens float64
}

// BreakerState is one provider/model's breaker.
type BreakerState struct {
	Provider, Model string
	// State is "closed" (counting failures), "open" (everyone waits) or
	// "probing" (one request decides).
	State    string
	Failures int
	// OpenUntil is when an open breaker lets a probe through.
	OpenUntil time.Time
}

// Status reads the shared state. budget returns the configured budget of a
// provider, to compute what is left; nil shows the last stored levels.
func (f *Fleet) Status(ctx context.Context, budget func(provider string) Budget) (*Status, error) {
	st := &Status{}
	var err error
	if st.Marks, err = (&Marks{Fleet: f}).shared(ctx, ""); err != nil {
		return nil, err
	}
	err = f.do(ctx, "status", func(ctx context.Context, c *redis.Client) error {
		now, err := c.Time(ctx).Result()
		if err != nil {
			return err
		}
		if err := f.cooldowns(ctx, c, st, now); err != nil {
			return err
		}
		if err := f.budgets(ctx, c, st, now, budget); err != nil {
			return err
		}
		return f.breakers(ctx, c, st, now)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(st.Marks, func(a, b auth.Mark) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID))
	})
	return st, nil
}

// each runs fn for every hash whose key matches kind, with its parts.
func (f *Fleet) each(ctx context.Context, c *redis.Client, st *Status, kind string, fn func(parts []string, h map[string]string)) error {
	keys, err := scan(ctx, c, f.key(kind)+":*")
	if err != nil {
		return err
	}
	slices.Sort(keys)
	for _, k := range keys {
		h, err := c.HGetAll(ctx, k).Result()
		if wrongType(err) {
			st.Skipped = append(st.Skipped, k)
			continue
		}
		if err != nil {
			return err
		}
		if parts := f.unparts(k, kind); len(parts) == 2 && len(h) > 0 {
			fn(parts, h)
		}
	}
	return nil
}

// wrongType reports Redis's reply to a hash command on a key that holds
// another type.
func wrongType(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "WRONGTYPE ")
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return v
}

func ms(v float64) time.Time { return time.UnixMilli(int64(v)) }

func (f *Fleet) cooldowns(ctx context.Context, c *redis.Client, st *Status, now time.Time) error {
	return f.each(ctx, c, st, "cool", func(p []string, h map[string]string) {
		if u := ms(num(h["until"])); u.After(now) {
			st.Cooldowns = append(st.Cooldowns, Cooldown{Provider: p[0], Fingerprint: p[1], Until: u, Status: int(num(h["status"]))})
		}
	})
}

func (f *Fleet) budgets(ctx context.Context, c *redis.Client, st *Status, now time.Time, budget func(string) Budget) error {
	return f.each(ctx, c, st, "budget", func(p []string, h map[string]string) {
		b := BudgetState{Provider: p[0], Fingerprint: p[1], Requests: math.NaN(), Tokens: math.NaN()}
		var cfg Budget
		if budget != nil {
			cfg = budget(p[0])
		}
		el := float64(now.Sub(ms(num(h["ts"]))).Milliseconds())
		level := func(v string, n int) float64 {
			burst, rate := bucket(n, cfg.window())
			if n <= 0 {
				if budget != nil {
					return math.NaN()
				}
				return num(v)
			}
			return math.Min(burst, num(v)+max(el, 0)*rate)
		}
		if _, ok := h["r"]; ok {
			b.Requests = level(h["r"], cfg.Requests)
		}
		if _, ok := h["t"]; ok {
			b.Tokens = level(h["t"], cfg.Tokens)
		}
		st.Budgets = append(st.Budgets, b)
	})
}

func (f *Fleet) breakers(ctx context.Context, c *redis.Client, st *Status, now time.Time) error {
	return f.each(ctx, c, st, "breaker", func(p []string, h map[string]string) {
		b := BreakerState{Provider: p[0], Model: p[1], State: "closed", Failures: int(num(h["fails"]))}
		if open := num(h["open"]); open > 0 {
			b.OpenUntil = ms(open)
			b.State = "open"
			if !b.OpenUntil.After(now) {
				b.State = "probing"
			}
		}
		st.Breakers = append(st.Breakers, b)
	})
}
