package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/redis/go-redis/v9"
)

const (
	key1 = "sk-test-fleet-key-one-1111"
	key2 = "sk-test-fleet-key-two-2222"
)

// open connects a Fleet to url, closed when the test ends. Each call is a
// separate client, as separate rally processes are.
func open(t *testing.T, url string, warn func(string)) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Open(fleet.Config{URL: url, Timeout: 200 * time.Millisecond, Reconnect: 50 * time.Millisecond, Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// gate is a Gate for key on the fake LLM's Chat Completions endpoint.
func gate(f *fleet.Fleet, srv *llmtest.Server, key string) *fleet.Gate {
	return &fleet.Gate{
		Provider:     &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", APIKey: key, Provider: "acme"}},
		Fleet:        f,
		ProviderName: "acme", Model: "m", Credential: "id-" + key[len(key)-4:], Fingerprint: auth.Fingerprint(key),
	}
}

// ask sends one request through p and reads the answer to its end.
func ask(ctx context.Context, p llm.Provider) error {
	s, err := p.Stream(ctx, request())
	if err != nil {
		return err
	}
	_, err = llm.Collect(s)
	return err
}

// everything returns every key and value rally wrote to Redis, to check
// that no key ever lands there.
func everything(t *testing.T, url string) string {
	t.Helper()
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := t.Context()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\n")
		switch c.Type(ctx, k).Val() {
		case "string":
			b.WriteString(c.Get(ctx, k).Val())
		case "hash":
			fmt.Fprint(&b, c.HGetAll(ctx, k).Val())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestMarksShared(t *testing.T) {
	srv := redistest.Start(t)
	a := &fleet.Marks{Fleet: open(t, srv.URL, nil), Local: &auth.FileMarks{Path: filepath.Join(t.TempDir(), "marks.json")}}
	b := &fleet.Marks{Fleet: open(t, srv.URL, nil), Local: &auth.FileMarks{Path: filepath.Join(t.TempDir(), "marks.json")}}
	ctx := t.Context()
	long := auth.Mark{Provider: "acme", ID: "work", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour), Reason: "usage limit"}
	if err := a.Block(ctx, long); err != nil {
		t.Fatal(err)
	}
	// An earlier end from another machine, under another id, keeps the later.
	if err := b.Block(ctx, auth.Mark{Provider: "acme", ID: "team", Key: long.Key, Until: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	short := auth.Mark{Provider: "acme", ID: "two", Key: auth.Fingerprint(key2), Until: time.Now().Add(300 * time.Millisecond)}
	if err := a.Block(ctx, short); err != nil {
		t.Fatal(err)
	}
	shared := &fleet.Marks{Fleet: open(t, srv.URL, nil)} // a third process, no file
	ms, err := shared.Blocked(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("marks %+v, want two", ms)
	}
	for _, m := range ms {
		if m.Key == long.Key && (m.ID != "work" || !m.Until.Equal(long.Until.Truncate(time.Nanosecond)) && m.Until.Sub(long.Until).Abs() > time.Millisecond) {
			t.Errorf("mark %+v, want the later end from work", m)
		}
	}
	if ms, _ := shared.Blocked(ctx, "other"); len(ms) != 0 {
		t.Errorf("other provider's marks %+v", ms)
	}
	proctest.Wait(t, "the short mark expires in Redis", func() bool {
		ms, _ := shared.Blocked(ctx, "")
		return len(ms) == 1 && ms[0].Key == long.Key
	})
	if all := everything(t, srv.URL); strings.Contains(all, key1) || strings.Contains(all, key2) || !strings.Contains(all, long.Key) {
		t.Errorf("redis holds a key, or not the fingerprint:\n%s", all)
	}
}

func TestCooldownShared(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": "1"}},
		llmtest.Step{Text: "ok"})
	a, b := gate(open(t, rs.URL, nil), fake, key1), gate(open(t, rs.URL, nil), fake, key1)
	var waits []fleet.Wait
	b.OnWait = func(w fleet.Wait) { waits = append(waits, w) }
	err := ask(t.Context(), a)
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Fatalf("A got %v (%v), want a transient 429", err, v)
	}
	if err := ask(t.Context(), b); err != nil {
		t.Fatalf("B: %v", err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[1].Outcome != "ok" {
		t.Fatalf("requests %+v, want A's 429 then B's ok", reqs)
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 900*time.Millisecond {
		t.Errorf("B went %s after A's 429, want the hinted 1s", gap)
	}
	if len(waits) != 1 || waits[0].Reason != fleet.WaitCooldown || waits[0].Status != 429 || waits[0].Fingerprint != auth.Fingerprint(key1) {
		t.Errorf("waits %+v, want one cooldown wait", waits)
	}
	// Another key is not held back.
	c := gate(open(t, rs.URL, nil), fake, key2)
	c.OnWait = func(w fleet.Wait) { t.Errorf("key 2 waited: %v", w) }
	if err := ask(t.Context(), c); err != nil {
		t.Fatal(err)
	}
}

func TestCooldownWaitIsCancellable(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": "30"}},
		llmtest.Step{Text: "ok"})
	a, b := gate(open(t, rs.URL, nil), fake, key1), gate(open(t, rs.URL, nil), fake, key1)
	ask(t.Context(), a)
	ctx, cancel := context.WithCancel(t.Context())
	b.OnWait = func(fleet.Wait) { cancel() }
	start := time.Now()
	if err := ask(ctx, b); !errors.Is(err, context.Canceled) {
		t.Fatalf("B: %v, want cancelled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %s", d)
	}
	// A wait past MaxWait fails at once with the time left, as the
	// server's own answer would.
	b.OnWait, b.MaxWait = nil, 5*time.Second
	err := ask(t.Context(), b)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 || retry.Hint(retry.FailureOf(err), time.Now()) < 25*time.Second {
		t.Fatalf("B: %v, want a local 429 with the 30s hint", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests, want only A's", n)
	}
}

func TestBudget(t *testing.T) {
	rs := redistest.Start(t)
	watch := rs.Watch()
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	// 10 requests per 2 s window (scaled down from a minute), 2 clients of
	// 8 workers, 32 requests: at least 3 s of waiting. The window is
	// counted over the grants on Redis's clock, not over the fake LLM's
	// arrivals, which trail them by however loaded the machine is; each
	// arrival is then checked to come after its grant.
	budget := fleet.Budget{Requests: 10, Window: 2 * time.Second}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		waits int
	)
	// The budget is only enforced while Redis answers: a call slower than
	// the timeout puts the fleet in local mode (a warning). On this shared
	// 2-core machine under -race a 200 ms call is possible, so this test
	// gives Redis 2 s and fails if the fleet ever left shared mode.
	warned := func(w string) { t.Errorf("fleet left shared mode: %s", w) }
	for range 2 {
		f, err := fleet.Open(fleet.Config{URL: rs.URL, Timeout: 2 * time.Second, Reconnect: 50 * time.Millisecond, Warn: warned})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		for range 8 {
			g := gate(f, fake, key1)
			g.Budget = budget
			g.OnWait = func(w fleet.Wait) {
				mu.Lock()
				waits++
				mu.Unlock()
			}
			wg.Go(func() {
				for range 2 {
					if err := ask(t.Context(), g); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	reqs := fake.Requests()
	if len(reqs) != 32 {
		t.Fatalf("%d requests, want 32", len(reqs))
	}
	grants := watch.BudgetGrants(budget.Requests, budget.Window)
	if len(grants) != 32 {
		t.Fatalf("%d budget grants in redis, want 32", len(grants))
	}
	if most := redistest.Busiest(grants, budget.Window); most > budget.Requests {
		t.Errorf("%d requests granted within one %s window, want at most %d", most, budget.Window, budget.Requests)
	}
	if k := redistest.Early(times(reqs), grants, time.Millisecond); k >= 0 {
		t.Errorf("request %d reached the LLM before its grant", k)
	}
	if waits == 0 {
		t.Error("no request waited for the budget")
	}
}

// times are the arrival times of reqs.
func times(reqs []llmtest.Request) []time.Time {
	ts := make([]time.Time, len(reqs))
	for i, r := range reqs {
		ts[i] = r.Time
	}
	return ts
}

func TestBreaker(t *testing.T) {
	rs := redistest.Start(t)
	down := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}
	fake := llmtest.NewServer(t, down, down, down, down, llmtest.Step{Text: "ok"})
	br := fleet.Breaker{Failures: 3, Window: 10 * time.Second, Open: 300 * time.Millisecond}
	gates := make([]*fleet.Gate, 4)
	var mu sync.Mutex
	var reasons []string
	for i := range gates {
		// steady: a 200 ms Redis call on a loaded machine would put a
		// gate in local mode, where no breaker holds it back.
		gates[i] = gate(steady(t, rs.URL), fake, key1)
		gates[i].Breaker = br
		gates[i].OnWait = func(w fleet.Wait) { mu.Lock(); reasons = append(reasons, w.Reason); mu.Unlock() }
	}
	for i := range 3 {
		if err := ask(t.Context(), gates[i]); err == nil {
			t.Fatal("want a 500")
		}
	}
	// Open: the fourth agent waits instead of sending, then probes; the
	// probe fails (the fourth 500) and the breaker opens again; the next
	// probe succeeds and closes it.
	start := time.Now()
	if err := ask(t.Context(), gates[3]); err == nil {
		t.Fatal("the first probe should meet the fourth 500")
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("the fourth agent went after %s, want the breaker's 300ms", d)
	}
	var wg sync.WaitGroup
	for _, g := range gates {
		wg.Go(func() {
			if err := ask(t.Context(), g); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	reqs := fake.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 3 failures, a failed probe, then 4", len(reqs))
	}
	// After the failed probe, the good probe went alone: nobody else
	// was sent before it answered.
	if reqs[4].Outcome != "ok" || reqs[5].Time.Before(reqs[4].Time.Add(time.Duration(reqs[4].DurationMs)*time.Millisecond)) {
		t.Errorf("requests after the failed probe: %+v", reqs[4:])
	}
	if !contains(reasons, fleet.WaitBreaker) {
		t.Errorf("wait reasons %v, want a breaker wait", reasons)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestRedisDown: a killed Redis costs at most one timeout, one warning,
// and then nothing; when it is back, sharing resumes by itself.
func TestRedisDown(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	var mu sync.Mutex
	var warnings []string
	f := open(t, rs.URL, func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() })
	g := gate(f, fake, key1)
	g.Budget = fleet.Budget{Requests: 1000}
	if err := ask(t.Context(), g); err != nil || f.Local() {
		t.Fatalf("first request: %v (local %v)", err, f.Local())
	}
	rs.Stop()
	for i := range 5 {
		start := time.Now()
		if err := ask(t.Context(), g); err != nil {
			t.Fatalf("request %d with redis down: %v", i, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("request %d took %s with redis down, want at most about the 200ms timeout", i, d)
		}
	}
	marks := &fleet.Marks{Fleet: f, Local: &auth.FileMarks{Path: filepath.Join(t.TempDir(), "m.json")}}
	m := auth.Mark{Provider: "acme", ID: "a", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour)}
	if err := marks.Block(t.Context(), m); err != nil {
		t.Errorf("block with redis down: %v (the file store has it)", err)
	}
	if ms, err := marks.Blocked(t.Context(), "acme"); err != nil || len(ms) != 1 {
		t.Errorf("blocked with redis down: %v %v, want the local mark", ms, err)
	}
	mu.Lock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], rs.Addr) {
		t.Errorf("warnings %q, want one naming the address", warnings)
	}
	mu.Unlock()

	rs.Restart()
	proctest.Wait(t, "back to shared mode", func() bool { return !f.Local() })
	other := open(t, rs.URL, nil)
	if err := marks.Block(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if ms, _ := (&fleet.Marks{Fleet: other}).Blocked(t.Context(), "acme"); len(ms) != 1 {
		t.Errorf("after the restart another process sees %v, want the mark", ms)
	}
	mu.Lock()
	if len(warnings) != 1 {
		t.Errorf("warnings %q, want still one", warnings)
	}
	mu.Unlock()
}

func TestOpenRefusesBadURL(t *testing.T) {
	for _, u := range []string{"http://h:1", "redis://", "::", "redis://:hunter2-secret@h:1/x/y"} {
		_, err := fleet.Open(fleet.Config{URL: u})
		if err == nil {
			t.Errorf("%q: no error", u)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error shows the password: %v", u, err)
		}
	}
}

func TestStatus(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded, Header: map[string]string{"retry-after": "60"}},
		llmtest.Step{Text: "ok"})
	f := open(t, rs.URL, nil)
	g := gate(f, fake, key1)
	g.Breaker = fleet.Breaker{Failures: 1, Open: time.Minute}
	g.Budget = fleet.Budget{Requests: 100}
	ask(t.Context(), g)
	(&fleet.Marks{Fleet: f}).Block(t.Context(), auth.Mark{Provider: "acme", ID: "b", Key: auth.Fingerprint(key2), Until: time.Now().Add(time.Hour)})
	st, err := f.Status(t.Context(), func(string) fleet.Budget { return g.Budget })
	if err != nil {
		t.Fatal(err)
	}
	fp := auth.Fingerprint(key1)
	if len(st.Marks) != 1 || st.Marks[0].ID != "b" {
		t.Errorf("marks %+v", st.Marks)
	}
	if len(st.Cooldowns) != 1 || st.Cooldowns[0].Fingerprint != fp || st.Cooldowns[0].Status != http.StatusServiceUnavailable || time.Until(st.Cooldowns[0].Until) < 50*time.Second {
		t.Errorf("cooldowns %+v", st.Cooldowns)
	}
	if len(st.Budgets) != 1 || st.Budgets[0].Fingerprint != fp || st.Budgets[0].Requests < 8 || st.Budgets[0].Requests > 10 {
		t.Errorf("budgets %+v, want 9 of 10 left", st.Budgets)
	}
	if len(st.Breakers) != 1 || st.Breakers[0].State != "open" || st.Breakers[0].Model != "m" {
		t.Errorf("breakers %+v", st.Breakers)
	}
}
