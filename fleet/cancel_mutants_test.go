package fleet_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/redis/go-redis/v9"
)

// These tests each catch mutants that lived through the rest of the fleet
// tests (scripts/mutate.sh): what a request that leaves while it waits
// gives back, and how long another agent's probe is waited for.

// firstWait asks through g, cancels at its first wait and returns it.
func firstWait(t *testing.T, g *fleet.Gate) fleet.Wait {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got fleet.Wait
	g.OnWait = func(w fleet.Wait) {
		if got.Reason == "" {
			got = w
		}
		cancel()
	}
	if err := ask(ctx, g); !errors.Is(err, context.Canceled) {
		t.Fatalf("request: %v, want it cancelled while waiting", err)
	}
	return got
}

// redisNow is Redis's clock in Unix ms, the one the fleet's scripts use.
func redisNow(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// TestCancelledBudgetWaitGivesBack: a request cancelled while it waits
// for the budget gives its reservation back, so the next one waits as
// long as it would have, not a request longer. Bug caught: the refund
// skipped, so every abandoned wait costs the fleet a request of budget.
func TestCancelledBudgetWaitGivesBack(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	g := gate(steady(t, rs.URL), fake, key1)
	g.Budget = fleet.Budget{Requests: 10, Window: 100 * time.Second} // a burst of 1, then one every 11 s
	if err := ask(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	first := firstWait(t, g)
	second := firstWait(t, g)
	if first.Reason != fleet.WaitBudget || second.Reason != fleet.WaitBudget {
		t.Fatalf("waits %+v and %+v, want both for the budget", first, second)
	}
	if second.Delay > first.Delay*3/2 {
		t.Errorf("after a cancelled wait of %s the next waits %s, want about the same", first.Delay, second.Delay)
	}
}

// TestCancelledProbeLetsAnotherProbe: a request that took the breaker's
// probe and is cancelled while it waits for the budget lets the next
// request probe at once. Bug caught: the probe not released, so every
// agent waits out the 30 s probe lease of a request that left.
func TestCancelledProbeLetsAnotherProbe(t *testing.T) {
	g := probeDue(t, 0)
	for i := range 2 {
		if w := firstWait(t, g); w.Reason != fleet.WaitBudget {
			t.Fatalf("request %d waits %+v, want the budget (it holds the probe)", i+1, w)
		}
	}
}

// TestProbeWaitedForMaxWait: another agent's probe is waited for as long
// as MaxWait, re-asked every 250 ms, before the request fails with a 503.
// Bug caught: a wait of exactly MaxWait (or a total reaching it) taken
// as longer, so the request fails at once. The check is a lower bound,
// which a slow machine only passes more easily.
func TestProbeWaitedForMaxWait(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	lease := redisNow(t, rdb) + 30_000
	if err := rdb.HSet(t.Context(), "rally:breaker:acme:m", "open", 1, "fails", 3, "probe", "another agent", "probeUntil", lease).Err(); err != nil {
		t.Fatal(err)
	}
	g := gate(steady(t, rs.URL), fake, key1)
	g.Breaker = fleet.Breaker{Failures: 3, Window: time.Minute, Open: time.Minute}
	g.MaxWait = 250 * time.Millisecond
	start := time.Now()
	err := ask(t.Context(), g)
	took := time.Since(start)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 503 {
		t.Fatalf("err %v, want a 503 once the probe was waited for MaxWait", err)
	}
	if took < g.MaxWait {
		t.Errorf("failed after %s, want after waiting MaxWait (%s) for the probe", took, g.MaxWait)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider while another agent probed", n)
	}
}

// tooLong asks through g once, expecting the budget's wait to be longer
// than MaxWait: a 429 at once, with the wait as its hint. A wait told to
// OnWait (there should be none) cancels the request and is returned.
func tooLong(t *testing.T, g *fleet.Gate) (*llm.APIError, fleet.Wait) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var w fleet.Wait
	g.OnWait = func(got fleet.Wait) { w = got; cancel() }
	err := ask(ctx, g)
	var ae *llm.APIError
	errors.As(err, &ae)
	return ae, w
}

// TestTooLongBudgetWaitGivesBack: a request whose budget wait is longer
// than MaxWait fails at once with a 429 naming the wait, and gives its
// reservation back: the next request is told the same wait, not a longer
// one. Bug caught: the refund skipped on that path.
func TestTooLongBudgetWaitGivesBack(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	g := gate(steady(t, rs.URL), fake, key1)
	g.Budget = fleet.Budget{Requests: 10, Window: 100 * time.Second} // 11 s a request after the burst
	g.MaxWait = 5 * time.Second
	if err := ask(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	var hints []string
	for range 2 {
		ae, w := tooLong(t, g)
		if ae == nil || ae.StatusCode != 429 || w.Reason != "" {
			t.Fatalf("error %v after wait %+v, want a 429 at once", ae, w)
		}
		hints = append(hints, ae.Header.Get("Retry-After-Ms"))
	}
	first, second := ms(t, hints[0]), ms(t, hints[1])
	if second > first*6/5 {
		t.Errorf("after a refused wait of %d ms the next is told %d ms, want about the same", first, second)
	}
}

// TestTooLongProbeReleased: a request that took the breaker's probe and
// then fails at once on a budget wait longer than MaxWait releases the
// probe: the next request meets the budget, not another agent's probe.
// Bug caught: the probe kept for its 30 s lease by a request that left.
func TestTooLongProbeReleased(t *testing.T) {
	g := probeDue(t, 5*time.Second)
	for i := range 2 {
		if ae, w := tooLong(t, g); ae == nil || ae.StatusCode != 429 || w.Reason != "" {
			t.Fatalf("request %d: error %v after wait %+v, want the budget's 429 at once", i+1, ae, w)
		}
	}
}

// probeDue is a gate (with maxWait) whose budget is spent, its burst
// taken, and whose breaker opened long ago, so its next request becomes
// the breaker's probe and then waits for the budget (11 s).
func probeDue(t *testing.T, maxWait time.Duration) *fleet.Gate {
	t.Helper()
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	g := gate(steady(t, rs.URL), fake, key1)
	g.Budget = fleet.Budget{Requests: 10, Window: 100 * time.Second}
	g.MaxWait = maxWait
	if err := ask(t.Context(), g); err != nil { // takes the burst
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	if err := rdb.HSet(t.Context(), "rally:breaker:acme:m", "open", 1, "fails", 3).Err(); err != nil {
		t.Fatal(err)
	}
	g.Breaker = fleet.Breaker{Failures: 3, Window: time.Minute, Open: time.Minute}
	return g
}

func ms(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("retry-after-ms %q: %v", s, err)
	}
	return n
}

// TestBlockWithNowhereToKeepIt: a mark with no local store fails when
// Redis cannot take it, since no one took it. Bug caught: the Redis error
// dropped, so the caller believes the credential is marked.
func TestBlockWithNowhereToKeepIt(t *testing.T) {
	rs := redistest.Start(t)
	f := open(t, rs.URL, nil)
	rs.Stop()
	marks := &fleet.Marks{Fleet: f}
	m := auth.Mark{Provider: "acme", ID: "a", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour)}
	if err := marks.Block(t.Context(), m); err == nil {
		t.Error("block with redis down and no local store: no error, want one")
	}
}
