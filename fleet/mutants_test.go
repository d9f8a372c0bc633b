package fleet_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/window"
	"github.com/redis/go-redis/v9"
)

// These tests each catch one small bug that the rest of the suite let
// through (issue 30); the bug is named in each test's comment.

// steady connects a Fleet that stays in shared mode under load: a
// 200 ms call is possible on a busy 2-core machine under -race, and a
// fleet gone local lets every request go, which these tests would read as
// the bug. Leaving shared mode fails the test.
func steady(t *testing.T, url string) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Open(fleet.Config{URL: url, Timeout: 2 * time.Second, Reconnect: 50 * time.Millisecond,
		Warn: func(w string) { t.Errorf("fleet left shared mode: %s", w) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestBudgetIdleBucketCappedAtBurst: after a quiet spell the bucket holds
// its burst, not everything the spell would have refilled. Bug caught: the
// refill not capped at the burst, so a whole window's worth goes at once.
// The quiet spell is made by moving the bucket's clock back in Redis, not
// by sleeping.
func TestBudgetIdleBucketCappedAtBurst(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	// 10 per 100 s: a burst of 1, then one request every 11 s.
	g := gate(steady(t, rs.URL), fake, key1)
	g.Budget = fleet.Budget{Requests: 10, Window: 100 * time.Second}
	if err := ask(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	keys, err := rdb.Keys(t.Context(), "rally:budget:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("budget keys %v (%v), want one", keys, err)
	}
	ts, err := rdb.HGet(t.Context(), keys[0], "ts").Int64()
	if err != nil {
		t.Fatal(err)
	}
	// A whole window of quiet: uncapped, the bucket would hold 9 more.
	if err := rdb.HSet(t.Context(), keys[0], "ts", strconv.FormatInt(ts-100_000, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	went := 0
	for range 4 {
		ctx, cancel := context.WithCancel(t.Context())
		waited := false
		g.OnWait = func(w fleet.Wait) {
			if w.Reason == fleet.WaitBudget {
				waited = true
			}
			cancel()
		}
		err := ask(ctx, g)
		cancel()
		switch {
		case err == nil && !waited:
			went++
		case waited && errors.Is(err, context.Canceled):
		default:
			t.Fatalf("request: %v (waited %v)", err, waited)
		}
	}
	if went != 1 {
		t.Errorf("%d requests went at once after a quiet window, want the burst of 1", went)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d requests reached the provider, want 2", n)
	}
}

// held is a provider whose requests wait for release before they go on to
// the real one, so a test can hold the breaker's probe in flight.
type held struct {
	llm.Provider
	entered, release chan struct{}
}

func (h *held) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	close(h.entered)
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Provider.Stream(ctx, req)
}

// TestBreakerWaitersGoWhenProbeCloses: agents waiting on another agent's
// probe go within a re-ask of the probe's success. Bug caught: waiters
// sleeping the whole 30 s probe lease instead of re-asking every 250 ms
// (TestBreaker still passes on it, only 50× slower). The bound, 5 s, is
// generous for a loaded machine and far below the lease.
func TestBreakerWaitersGoWhenProbeCloses(t *testing.T) {
	rs := redistest.Start(t)
	down := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}
	fake := llmtest.NewServer(t, down, down, down, llmtest.Step{Text: "ok"})
	br := fleet.Breaker{Failures: 3, Window: 10 * time.Second, Open: 50 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 3 {
		g := gate(steady(t, rs.URL), fake, key1)
		g.Breaker = br
		if err := ask(ctx, g); err == nil {
			t.Fatal("want a 500")
		}
	}
	probe := gate(steady(t, rs.URL), fake, key1)
	probe.Breaker = br
	h := &held{Provider: probe.Provider, entered: make(chan struct{}), release: make(chan struct{})}
	probe.Provider = h
	probed := make(chan error, 1)
	go func() { probed <- ask(ctx, probe) }()
	select { // the probe holds the breaker's lease
	case <-h.entered:
	case <-ctx.Done():
		t.Fatal("the probe never went")
	}

	var waiting sync.WaitGroup
	waiting.Add(3)
	var wg sync.WaitGroup
	done := make([]time.Time, 3)
	for i := range 3 {
		g := gate(steady(t, rs.URL), fake, key1)
		g.Breaker = br
		var once sync.Once
		g.OnWait = func(w fleet.Wait) {
			if w.Reason == fleet.WaitProbe {
				once.Do(waiting.Done)
			}
		}
		wg.Go(func() {
			if err := ask(ctx, g); err != nil {
				t.Error(err)
			}
			done[i] = time.Now()
		})
	}
	// Every waiter has seen the probe in flight before it is let go.
	seen := make(chan struct{})
	go func() { waiting.Wait(); close(seen) }()
	select {
	case <-seen:
	case <-ctx.Done():
		t.Fatal("the waiters never waited for the probe")
	}
	close(h.release)
	if err := <-probed; err != nil {
		t.Fatalf("probe: %v", err)
	}
	closed := time.Now()
	wg.Wait()
	for i, d := range done {
		if d.IsZero() {
			continue // failed above
		}
		if late := d.Sub(closed); late > 5*time.Second {
			t.Errorf("waiter %d went %s after the probe closed the breaker, want within a re-ask (250ms)", i, late)
		}
	}
	if n := len(fake.Requests()); n != 7 {
		t.Errorf("%d requests, want 3 failures, the probe and 3 waiters", n)
	}
}

// TestWindowsIgnoresNonPositiveShared: a window of 0 or below found in
// Redis (a bad write, a hand edit) is no window, and the local store's
// answer stands. Bug caught: any number read from Redis returned as the
// window, hiding the local one.
func TestWindowsIgnoresNonPositiveShared(t *testing.T) {
	rs := redistest.Start(t)
	w := &fleet.Windows{Fleet: steady(t, rs.URL), Local: &window.File{Path: window.Path(t.TempDir())}}
	ctx := t.Context()
	if err := w.Local.Learn(ctx, "local", "", "m", 8192); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	for _, v := range []string{"0", "-1", "many"} {
		t.Run(v, func(t *testing.T) {
			if err := rdb.Set(ctx, "rally:window:local::m", v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := w.Window(ctx, "local", "", "m"); n != 8192 || err != nil {
				t.Errorf("shared %q: window %d (%v), want the local 8192", v, n, err)
			}
		})
	}
	// The key above is the one Window reads: a plausible shared window wins.
	rdb.Set(ctx, "rally:window:local::m", "16384", 0)
	if n, _ := w.Window(ctx, "local", "", "m"); n != 16384 {
		t.Fatalf("a shared 16384 read as %d: the test's key is not the fleet's", n)
	}
}

// TestOpenURLForms: rediss:// is accepted as redis:// is (Open does not
// dial), and the password may come from the URL or from Config.Password.
// Bugs caught (surviving mutants): the scheme test negated in part, which
// refused rediss://, and Config.Password applied when empty, which wiped
// the URL's password.
func TestOpenURLForms(t *testing.T) {
	f, err := fleet.Open(fleet.Config{URL: "rediss://cache.example:6380"})
	if err != nil {
		t.Fatalf("rediss: %v", err)
	}
	f.Close()
	rs := redistest.Start(t, "--requirepass", "pw-fleet")
	for _, cfg := range []fleet.Config{
		{URL: "redis://:pw-fleet@" + rs.Addr},
		{URL: rs.URL, Password: "pw-fleet"},
	} {
		cfg.Timeout = 2 * time.Second
		f, err := fleet.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		w := &fleet.Windows{Fleet: f}
		if err := w.Learn(t.Context(), "p", "", "m", 1000); err != nil {
			t.Errorf("password from the URL %v, from the config %v: %v", cfg.Password == "", cfg.Password != "", err)
		}
	}
}

// TestGateRouteAndTokens: the Gate's Model names its route (the
// request's model only when it has none), a token budget charges the
// estimate, and a success clears the failures the breaker counted. Bugs
// caught (surviving mutants): the model test negated, the estimate never
// charged, and a success on a breaker holding failures not recorded, so
// failures either side of it added up and opened it.
func TestGateRouteAndTokens(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	waitOnce := func(g *fleet.Gate) fleet.Wait {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var w fleet.Wait
		g.OnWait = func(got fleet.Wait) { w = got; cancel() }
		if err := ask(ctx, g); !errors.Is(err, context.Canceled) {
			t.Fatalf("request: %v, want it held and cancelled", err)
		}
		return w
	}
	t.Run("model", func(t *testing.T) {
		for _, tt := range []struct{ gate, want string }{{"gate-model", "gate-model"}, {"", "m"}} {
			g := gate(steady(t, rs.URL), fake, key2)
			g.Model = tt.gate
			// A window short enough that the wait stays under the Gate's
			// longest (maxDelayMs): a longer one fails at once instead.
			g.Budget = fleet.Budget{Requests: 1, Window: 30 * time.Second}
			ask(t.Context(), g) // takes the one request
			if w := waitOnce(g); w.Reason != fleet.WaitBudget || w.Model != tt.want {
				t.Errorf("gate model %q: wait %+v, want a budget wait on %q", tt.gate, w, tt.want)
			}
			rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
			rdb.FlushAll(t.Context())
			rdb.Close()
		}
	})
	t.Run("tokens", func(t *testing.T) {
		g := gate(steady(t, rs.URL), fake, key1)
		g.Budget = fleet.Budget{Tokens: 1000, Window: 30 * time.Second} // a burst of 100 tokens
		g.Estimate = func(*llm.Request) int { return 60 }
		if err := ask(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		if w := waitOnce(g); w.Reason != fleet.WaitBudget {
			t.Errorf("second 60-token request: wait %+v, want a budget wait", w)
		}
	})
	t.Run("success clears failures", func(t *testing.T) {
		down := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}
		flaky := llmtest.NewServer(t, down, down, llmtest.Step{Text: "ok"}, down, down, llmtest.Step{Text: "ok"})
		g := gate(steady(t, rs.URL), flaky, key1)
		g.Breaker = fleet.Breaker{Failures: 3, Window: time.Hour, Open: time.Hour}
		g.OnWait = func(w fleet.Wait) { t.Errorf("waited: %v (the breaker opened on failures a success had cleared)", w) }
		for i := range 6 {
			err := ask(t.Context(), g)
			if ok := i == 2 || i == 5; (err == nil) != ok {
				t.Fatalf("request %d: %v", i, err)
			}
		}
	})
}

// TestBreakerLongerThanMaxWaitFailsAtOnce: a breaker open longer than
// MaxWait fails the request at once with a 503 naming the time left, as a
// cooldown does with its status. Bug caught (a surviving mutant): the
// breaker left out of that rule, so the request sat out the whole hour.
func TestBreakerLongerThanMaxWaitFailsAtOnce(t *testing.T) {
	rs := redistest.Start(t)
	down := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}
	fake := llmtest.NewServer(t, down)
	g := gate(steady(t, rs.URL), fake, key1)
	g.Breaker = fleet.Breaker{Failures: 3, Window: time.Hour, Open: time.Hour}
	g.MaxWait = time.Second
	for range 3 {
		ask(t.Context(), g)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := ask(ctx, g)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 503 || retry.Hint(retry.FailureOf(err), time.Now()) < 50*time.Minute {
		t.Fatalf("request with the breaker open an hour: %v, want a local 503 with the time left", err)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("%d requests reached the provider, want the 3 failures", n)
	}
}
