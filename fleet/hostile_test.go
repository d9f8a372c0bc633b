package fleet_test

import (
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/redis/go-redis/v9"
)

// One bad writer in Redis (issue 24 defect 8, and defect 11's poisoned
// cooldown): every value rally reads back is checked like local input, and
// every shared wait is capped by the Gate's MaxWait (retry.maxDelayMs).
// Each case writes what a buggy or hostile client of the same Redis could,
// then sends one request through a Gate.

// patient opens a Fleet with a generous timeout: a Redis slowed by a busy
// machine must not put it in local mode, which lets every request go and
// would hide what these tests check. It fails the test if it went local.
func patient(t *testing.T, url string) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Open(fleet.Config{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f.Local() {
			t.Error("the Fleet went local: the test proved nothing")
		}
		f.Close()
	})
	return f
}

func TestPoisonedRedisValues(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { rdb.Close() })
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	fp := auth.Fingerprint(key1)
	far := strconv.FormatInt(time.Now().Add(100*365*24*time.Hour).UnixMilli(), 10)
	const maxWait = 400 * time.Millisecond

	newGate := func(t *testing.T) (*fleet.Gate, *[]fleet.Wait) {
		f := patient(t, rs.URL)
		g := gate(f, fake, key1)
		g.MaxWait = maxWait
		var mu sync.Mutex
		waits := &[]fleet.Wait{}
		g.OnWait = func(w fleet.Wait) { mu.Lock(); *waits = append(*waits, w); mu.Unlock() }
		return g, waits
	}
	// retryAfter is the Retry-After-Ms of a fleet refusal, which must be
	// an APIError of the given status.
	retryAfter := func(t *testing.T, err error, status int) time.Duration {
		t.Helper()
		var ae *llm.APIError
		if !errors.As(err, &ae) || ae.StatusCode != status {
			t.Fatalf("error %v, want an APIError %d", err, status)
		}
		ms, _ := strconv.ParseInt(ae.Header.Get("Retry-After-Ms"), 10, 64)
		return time.Duration(ms) * time.Millisecond
	}
	timed := func(t *testing.T, g *fleet.Gate) (error, time.Duration) {
		t.Helper()
		start := time.Now()
		err := ask(t.Context(), g)
		return err, time.Since(start)
	}

	t.Run("budget far in debt", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		g, waits := newGate(t)
		g.Budget = fleet.Budget{Requests: 60, Window: time.Minute}
		if err := ask(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		rdb.HSet(t.Context(), "rally:budget:acme:"+fp, "r", "-1000000")
		err, took := timed(t, g)
		if after := retryAfter(t, err, http.StatusTooManyRequests); after > maxWait+2*time.Second {
			t.Errorf("told to wait %v (the debt was taken as it is), want about %v at most", after, maxWait)
		}
		if took > 2*time.Second {
			t.Errorf("the refusal took %v", took)
		}
		for _, w := range *waits {
			if w.Delay > maxWait {
				t.Errorf("waited %v, more than MaxWait %v", w.Delay, maxWait)
			}
		}
	})

	t.Run("breaker probe lease in the far future", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		g, _ := newGate(t)
		g.Breaker = fleet.Breaker{Failures: 3, Window: 10 * time.Second, Open: 200 * time.Millisecond}
		rdb.HSet(t.Context(), "rally:breaker:acme:m", "open", time.Now().Add(-time.Second).UnixMilli(), "probe", "someone-else", "probeUntil", far)
		err, took := timed(t, g)
		retryAfter(t, err, http.StatusServiceUnavailable)
		if took > 3*time.Second {
			t.Errorf("waited %v for a probe that never ends, want about MaxWait %v", took, maxWait)
		}
		pu, _ := rdb.HGet(t.Context(), "rally:breaker:acme:m", "probeUntil").Int64()
		if time.UnixMilli(pu).After(time.Now().Add(time.Minute)) {
			t.Errorf("the probe lease still ends at %v: not cut, so every request keeps failing", time.UnixMilli(pu))
		}
	})

	t.Run("breaker open in the far future", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		g, _ := newGate(t)
		g.Breaker = fleet.Breaker{Failures: 3, Window: 10 * time.Second, Open: 200 * time.Millisecond}
		rdb.HSet(t.Context(), "rally:breaker:acme:m", "open", far)
		// Cut to the breaker's own 200 ms: waited out, then this request
		// probes and closes it.
		if err, took := timed(t, g); err != nil || took > 3*time.Second {
			t.Fatalf("request: %v after %v, want it sent after the breaker's open time", err, took)
		}
	})

	t.Run("cooldown for a century with status 200", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		g, _ := newGate(t)
		rdb.HSet(t.Context(), "rally:cool:acme:"+fp, "until", far, "status", "200")
		err, _ := timed(t, g)
		if after := retryAfter(t, err, http.StatusTooManyRequests); after > time.Hour {
			t.Errorf("told to wait %v", after)
		}
		if strings.Contains(err.Error(), "200") {
			t.Errorf("error %q repeats the status 200 as a cooldown's", err)
		}
		until, _ := rdb.HGet(t.Context(), "rally:cool:acme:"+fp, "until").Int64()
		if time.UnixMilli(until).After(time.Now().Add(time.Hour + time.Minute)) {
			t.Errorf("the cooldown still ends at %v: not cut, so it never heals", time.UnixMilli(until))
		}
	})

	t.Run("short cooldown with status 200", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		g, waits := newGate(t)
		rdb.HSet(t.Context(), "rally:cool:acme:"+fp, "until", time.Now().Add(200*time.Millisecond).UnixMilli(), "status", "200")
		if err := ask(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		if len(*waits) == 0 {
			t.Fatal("no cooldown wait reported")
		}
		if s := (*waits)[0].String(); strings.Contains(s, "got 200") || !strings.Contains(s, "another agent was told to wait") {
			t.Errorf("wait says %q", s)
		}
	})

	t.Run("learned window below the floor", func(t *testing.T) {
		rdb.FlushAll(t.Context())
		w := &fleet.Windows{Fleet: patient(t, rs.URL)}
		if err := w.Learn(t.Context(), "custom", "http://a.example/v1", "m", 8192); err != nil {
			t.Fatal(err)
		}
		keys := rdb.Keys(t.Context(), "rally:window:*").Val()
		if len(keys) != 1 {
			t.Fatalf("window keys %v", keys)
		}
		for _, bad := range []string{"1", "0", "-5", "255", "x"} {
			rdb.Set(t.Context(), keys[0], bad, 0)
			if n, err := w.Window(t.Context(), "custom", "http://a.example/v1", "m"); n != 0 || err != nil {
				t.Errorf("Redis holds %q: window %d (%v), want it ignored", bad, n, err)
			}
		}
		if err := w.Learn(t.Context(), "custom", "http://a.example/v1", "m", 1); err == nil {
			t.Error("learning a window of 1 was accepted")
		}
	})
}

// TestMarksReadWithoutScan: the request path reads marks through an index,
// not a SCAN of the whole keyspace, which a Redis shared with millions of
// other keys made time out.
func TestMarksReadWithoutScan(t *testing.T) {
	rs := redistest.Start(t, "--enable-debug-command", "yes")
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { rdb.Close() })
	ctx := t.Context()
	if err := rdb.Do(ctx, "DEBUG", "POPULATE", 50000, "unrelated").Err(); err != nil {
		t.Fatal(err)
	}
	m := &fleet.Marks{Fleet: patient(t, rs.URL)}
	mk := auth.Mark{Provider: "acme", ID: "work", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour), Reason: "usage limit"}
	if err := m.Block(ctx, mk); err != nil {
		t.Fatal(err)
	}
	short := auth.Mark{Provider: "acme", ID: "two", Key: auth.Fingerprint(key2), Until: time.Now().Add(time.Hour)}
	if err := m.Block(ctx, short); err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, "rally:mark:acme:"+short.Key) // gone (expired, deleted) but still indexed
	rdb.ConfigResetStat(ctx)
	ms, err := m.Blocked(ctx, "acme")
	if err != nil || len(ms) != 1 || ms[0].Key != mk.Key {
		t.Fatalf("marks %+v (%v), want the one", ms, err)
	}
	if stats := rdb.Info(ctx, "commandstats").Val(); strings.Contains(stats, "cmdstat_scan") || strings.Contains(stats, "cmdstat_keys") {
		t.Errorf("reading marks scanned the keyspace:\n%s", stats)
	}
	if n := rdb.SCard(ctx, "rally:marks").Val(); n != 1 {
		t.Errorf("the index holds %d keys after the read, want the one live mark", n)
	}
}

// TestNamespacesShareNothing: two teams on one Redis, each with its own
// fleet.namespace, see none of each other's marks, windows or cooldowns.
func TestNamespacesShareNothing(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	openNS := func(ns string) *fleet.Fleet {
		f, err := fleet.Open(fleet.Config{URL: rs.URL, Namespace: ns, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b, def := openNS("team-a"), openNS("team-b"), openNS("")
	mk := auth.Mark{Provider: "acme", ID: "work", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour)}
	if err := (&fleet.Marks{Fleet: a}).Block(ctx, mk); err != nil {
		t.Fatal(err)
	}
	if err := (&fleet.Windows{Fleet: a}).Learn(ctx, "acme", "", "m", 4096); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*fleet.Fleet{"team-a": a, "team-b": b, "default": def} {
		ms, _ := (&fleet.Marks{Fleet: f}).Blocked(ctx, "acme")
		n, _ := (&fleet.Windows{Fleet: f}).Window(ctx, "acme", "", "m")
		want := name == "team-a"
		if (len(ms) == 1) != want || (n == 4096) != want {
			t.Errorf("%s sees %d marks and window %d; want team-a's only in team-a", name, len(ms), n)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	for _, k := range rdb.Keys(ctx, "*").Val() {
		if !strings.HasPrefix(k, "rally/team-a:") {
			t.Errorf("key %q outside team-a's prefix", k)
		}
	}
	if _, err := fleet.Open(fleet.Config{URL: rs.URL, Namespace: "a:*"}); err == nil {
		t.Error("a namespace with a glob and a separator was accepted")
	}
}

// TestWindowsKeyedByServerInRedis: through Redis too, server A's window is
// not server B's for the same provider and model (issue 24 defect 9).
func TestWindowsKeyedByServerInRedis(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	a, b := &fleet.Windows{Fleet: patient(t, rs.URL)}, &fleet.Windows{Fleet: patient(t, rs.URL)}
	if err := a.Learn(ctx, "custom", "http://10.0.0.1:8080/v1", "qwen3:8b", 4096); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		baseURL string
		want    int
	}{{"http://10.0.0.1:8080/v1", 4096}, {"http://10.0.0.2:8080/v1", 0}, {"", 0}} {
		if n, err := b.Window(ctx, "custom", tc.baseURL, "qwen3:8b"); n != tc.want || err != nil {
			t.Errorf("%q: window %d (%v), want %d", tc.baseURL, n, err, tc.want)
		}
	}
}

// TestACLUserFromTheREADME runs the README's ACL SETUSER line against a
// real redis-server, then every fleet operation as that user: all work
// (the Fleet stays shared, not local), and the user can touch no other key.
func TestACLUserFromTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "redis-cli ACL SETUSER rally ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatal("README has no redis-cli ACL SETUSER rally line")
	}
	var args []any
	for _, w := range strings.Fields(strings.TrimPrefix(line, "redis-cli ")) {
		args = append(args, strings.Trim(w, "'"))
	}
	rs := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { admin.Close() })
	ctx := t.Context()
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	admin.Set(ctx, "other:app:secret", "theirs", 0)

	f, err := fleet.Open(fleet.Config{URL: "redis://rally@" + rs.Addr, Password: "CHANGE-ME", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	marks := &fleet.Marks{Fleet: f}
	mk := auth.Mark{Provider: "acme", ID: "work", Key: auth.Fingerprint(key1), Until: time.Now().Add(time.Hour)}
	step := func(what string, err error) {
		t.Helper()
		if err != nil || f.Local() {
			t.Fatalf("%s as the ACL user: %v (local mode: %v)", what, err, f.Local())
		}
	}
	step("block", marks.Block(ctx, mk))
	ms, err := marks.Blocked(ctx, "acme")
	step("read marks", err)
	if len(ms) != 1 {
		t.Fatalf("marks %+v", ms)
	}
	admin.Del(ctx, "rally:mark:acme:"+mk.Key) // as if expired: the read takes it off the index
	_, err = marks.Blocked(ctx, "acme")
	step("read marks again", err)
	if n := admin.SCard(ctx, "rally:marks").Val(); n != 0 {
		t.Fatalf("the index still lists %d gone marks", n)
	}
	w := &fleet.Windows{Fleet: f}
	step("learn window", w.Learn(ctx, "acme", "", "m", 4096))
	_, err = w.Window(ctx, "acme", "", "m")
	step("read window", err)
	fake := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}, llmtest.Step{Text: "ok"})
	g := gate(f, fake, key2)
	g.Budget = fleet.Budget{Requests: 600}
	g.Breaker = fleet.Breaker{Failures: 5}
	if err := ask(ctx, g); err == nil {
		t.Fatal("want the scripted 500")
	}
	// The Gate lets a request go when Redis refuses a script, so what the
	// scripts wrote is the proof that they ran.
	if fails, _ := admin.HGet(ctx, "rally:breaker:acme:m", "fails").Int(); fails != 1 {
		t.Fatalf("breaker holds %d failures after the 500, want 1: the record script did not run as the ACL user", fails)
	}
	step("admit and record a success", ask(ctx, g))
	if admin.Exists(ctx, "rally:breaker:acme:m").Val() != 0 {
		t.Fatal("the success did not clear the breaker as the ACL user")
	}
	budget := "rally:budget:acme:" + auth.Fingerprint(key2)
	if r, _ := admin.HGet(ctx, budget, "r").Float64(); r > 59 || admin.PTTL(ctx, budget).Val() <= 0 {
		t.Fatalf("budget level %v, ttl %v after two requests of a burst of 60: the admit script did not run to its end as the ACL user", r, admin.PTTL(ctx, budget).Val())
	}
	_, err = f.Status(ctx, nil)
	step("status", err)

	user := redis.NewClient(&redis.Options{Addr: rs.Addr, Username: "rally", Password: "CHANGE-ME"})
	t.Cleanup(func() { user.Close() })
	if err := user.Get(ctx, "other:app:secret").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("the ACL user read another app's key: %v", err)
	}
	if err := user.FlushAll(ctx).Err(); err == nil {
		t.Error("the ACL user may FLUSHALL")
	}
}
