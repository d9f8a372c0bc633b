package fleet

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
)

// Budget limits what each credential of a provider sends across the
// fleet. Zero fields are no limit. Tokens are counted before the request
// (Gate.Estimate), and a request larger than the bucket's burst (a tenth
// of Tokens) takes the whole burst rather than waiting forever.
type Budget struct {
	Requests int // requests per Window
	Tokens   int // estimated input tokens per Window
	// Window is what the limits count over; 0 means a minute.
	Window time.Duration
}

func (b Budget) window() time.Duration {
	if b.Window <= 0 {
		return time.Minute
	}
	return b.Window
}

// bucket is the token bucket that keeps a limit of n per window: it holds
// at most burst and refills at (n−burst)/window, so whatever the timing,
// any window sees at most burst + (n−burst) = n. The burst is a tenth of
// the limit, which lets a quiet fleet start a few requests at once without
// costing much sustained rate. A limit of 1 refills at 1/window, which
// still keeps requests a window apart.
func bucket(n int, window time.Duration) (burst, perMs float64) {
	if n <= 0 {
		return 0, 0
	}
	burst = float64((n + 9) / 10)
	refill := float64(n) - burst
	if refill <= 0 {
		refill = float64(n)
	}
	return burst, refill / float64(window.Milliseconds())
}

// Breaker configures the circuit breaker per provider and model. The zero
// Breaker is off.
type Breaker struct {
	// Failures is how many consecutive transient failures, across the
	// fleet, open the breaker; 0 turns it off.
	Failures int
	// Window: the failures must fall within it, from the first.
	Window time.Duration
	// Open is how long every agent holds back before one probe decides.
	Open time.Duration
}

// probeLease is how long the breaker waits for its probe's answer (the
// response headers) before another request may probe: the default
// first-byte timeout of a provider, after which the probe is presumed lost
// (its process crashed, or the timeout fired and was recorded anyway).
const probeLease = 30 * time.Second

// maxCooldown is the longest cooldown shared: a server hint beyond it is
// cut to it, and so is one read from Redis, which a bad writer may have
// set to years. Waits longer than the Gate's MaxWait fail at once anyway;
// this bounds how long a poisoned key keeps doing that.
const maxCooldown = time.Hour

// Reasons an admission waits.
const (
	WaitCooldown = "cooldown" // a 429/503 hint another agent saw
	WaitBreaker  = "breaker"  // the provider/model's breaker is open
	WaitProbe    = "probe"    // another agent's probe request decides
	WaitBudget   = "budget"   // the credential's budget is spent for now
)

// admission is the answer of admitScript: go now, or wait.
type admission struct {
	reason string        // "" to go
	wait   time.Duration // how long, when reason != ""
	// reserved: the budget is already taken for this request; send it
	// after wait without asking again.
	reserved bool
	probe    bool // this request is the breaker's probe
	status   int  // the status that set a cooldown
	// dirty: the breaker holds failures, which a success must clear.
	dirty bool
}

// admitScript decides in one round trip whether a request may go: the
// credential's cooldown, then the breaker, then the budget, which it
// takes. A request over budget reserves its share and is told when to go
// (the bucket runs into debt), so waiters go in arrival order and never
// need to ask twice. Time is Redis's own clock, the same for the fleet.
//
// KEYS: cooldown, breaker, budget. ARGV: breaker on (0/1), probe id,
// probe lease ms, request burst, request refill per ms, token burst, token
// refill per ms, token cost, budget ttl ms, longest cooldown ms, breaker
// open ms, longest wait ms (the Gate's MaxWait).
//
// What it reads is checked like local input, since any client of the
// Redis may have written it: a cooldown, an open breaker or a probe lease
// that ends later than any this code writes is cut to the longest one (and
// written back, so that it ends), a budget level is kept between the debt
// the longest wait repays (a longer wait fails at once, refunded) and the
// burst, a last-update time in the future is now,
// and a value that is not a number is its default.
// Returns {reason, wait ms, reserved, probe, status, dirty}; reason 0 go,
// 1 cooldown, 2 breaker, 3 probe, 4 budget; dirty 1 when the breaker has
// failures to forget, so a success needs recording.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function n(v, d) return tonumber(v or d) or d end
local cu = n(redis.call('HGET', KEYS[1], 'until'), 0)
if cu > now + tonumber(ARGV[10]) then
  cu = now + tonumber(ARGV[10])
  redis.call('HSET', KEYS[1], 'until', cu)
  redis.call('PEXPIREAT', KEYS[1], cu)
end
if cu > now then
  return {1, cu - now, 0, 0, n(redis.call('HGET', KEYS[1], 'status'), 0), 0}
end
local probe, dirty = 0, 0
if ARGV[1] == '1' then
  local b = redis.call('HMGET', KEYS[2], 'open', 'probe', 'probeUntil')
  local open = n(b[1], 0)
  if open > now + tonumber(ARGV[11]) then
    open = now + tonumber(ARGV[11])
    redis.call('HSET', KEYS[2], 'open', open)
  end
  if open > now then
    return {2, open - now, 0, 0, 0, 1}
  end
  dirty = redis.call('EXISTS', KEYS[2])
  if open > 0 then
    local pu = math.min(n(b[3], 0), now + tonumber(ARGV[3]))
    if b[2] and b[2] ~= ARGV[2] and pu > now then
      redis.call('HSET', KEYS[2], 'probeUntil', pu)
      return {3, math.min(pu - now, 250), 0, 0, 0, 1}
    end
    redis.call('HSET', KEYS[2], 'probe', ARGV[2], 'probeUntil', now + tonumber(ARGV[3]))
    probe = 1
  end
end
local rb, rr, tb, tr = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if rb <= 0 and tb <= 0 then
  return {0, 0, 0, probe, 0, dirty}
end
local debt = tonumber(ARGV[12])
local h = redis.call('HMGET', KEYS[3], 'r', 't', 'ts')
local ts = math.min(n(h[3], now), now)
local el = now - ts
local function level(v, burst, rate)
  return math.max(-rate * debt, math.min(burst, n(v, burst) + el * rate))
end
local wait = 0
local r, tk = 0, 0
if rb > 0 then
  r = level(h[1], rb, rr) - 1
  if r < 0 then wait = math.max(wait, -r / rr) end
end
if tb > 0 then
  local cost = math.min(tonumber(ARGV[8]), tb)
  tk = level(h[2], tb, tr) - cost
  if tk < 0 then wait = math.max(wait, -tk / tr) end
end
redis.call('HSET', KEYS[3], 'r', tostring(r), 't', tostring(tk), 'ts', now)
redis.call('PEXPIRE', KEYS[3], ARGV[9])
if wait > 0 then
  return {4, math.ceil(wait), 1, probe, 0, dirty}
end
return {0, 0, 1, probe, 0, dirty}
`)

// refundScript gives back what a cancelled reservation took. KEYS: budget.
// ARGV: request burst, token burst, token cost.
var refundScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'r', 't')
if not h[1] and not h[2] then return 0 end
local rb, tb = tonumber(ARGV[1]), tonumber(ARGV[2])
if rb > 0 and h[1] then redis.call('HSET', KEYS[1], 'r', tostring(math.min(rb, tonumber(h[1]) + 1))) end
if tb > 0 and h[2] then redis.call('HSET', KEYS[1], 't', tostring(math.min(tb, tonumber(h[2]) + math.min(tonumber(ARGV[3]), tb)))) end
return 1
`)

// Outcomes of a request, for the breaker.
const (
	outcomeNeutral = 0 // says nothing about the provider's health (abort, rate limit)
	outcomeOK      = 1 // the provider answered
	outcomeFailed  = 2 // a transient failure: overload, 5xx, connection
)

// recordScript records what one request met. KEYS: cooldown, breaker.
// ARGV: cooldown ms (0 none), status, outcome, breaker on, failures,
// window ms, open ms, probe id, longest cooldown ms.
var recordScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cool = math.min(tonumber(ARGV[1]), tonumber(ARGV[9]))
if cool > 0 then
  local u = now + cool
  if u > tonumber(redis.call('HGET', KEYS[1], 'until') or '0') then
    redis.call('HSET', KEYS[1], 'until', u, 'status', ARGV[2], 'since', now)
    redis.call('PEXPIREAT', KEYS[1], u)
  end
end
if ARGV[4] ~= '1' then return 0 end
local outcome = ARGV[3]
local b = redis.call('HMGET', KEYS[2], 'fails', 'first', 'open', 'probe')
local isProbe = b[4] == ARGV[8]
if outcome == '1' then
  redis.call('DEL', KEYS[2])
  return 1
end
if outcome == '0' then
  if isProbe then redis.call('HDEL', KEYS[2], 'probe', 'probeUntil') end
  return 0
end
local openMs, window = tonumber(ARGV[7]), tonumber(ARGV[6])
local ttl = window + openMs * 4
if isProbe then
  redis.call('HSET', KEYS[2], 'open', now + openMs, 'fails', ARGV[5], 'first', now, 'openedAt', now)
  redis.call('HDEL', KEYS[2], 'probe', 'probeUntil')
  redis.call('PEXPIRE', KEYS[2], ttl)
  return 2
end
local fails, first = tonumber(b[1] or '0'), tonumber(b[2] or '0')
if now - first > window then
  fails, first = 1, now
else
  fails = fails + 1
end
redis.call('HSET', KEYS[2], 'fails', fails, 'first', first)
local open = tonumber(b[3] or '0')
if fails >= tonumber(ARGV[5]) and open <= 0 then
  redis.call('HSET', KEYS[2], 'open', now + openMs, 'openedAt', now)
end
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
`)

// route names the keys of one credential on one model.
type route struct {
	provider, model, fingerprint string
}

func (f *Fleet) keys(r route) []string {
	return []string{
		f.key("cool", r.provider, r.fingerprint),
		f.key("breaker", r.provider, r.model),
		f.key("budget", r.provider, r.fingerprint),
	}
}

// admit runs admitScript for one request of cost estimated tokens.
func (f *Fleet) admit(ctx context.Context, r route, b Budget, br Breaker, probeID string, cost int, maxWait time.Duration) (admission, error) {
	rb, rr := bucket(b.Requests, b.window())
	tb, tr := bucket(b.Tokens, b.window())
	var res []any
	err := f.do(ctx, "admit", func(ctx context.Context, c *redis.Client) error {
		var err error
		res, err = admitScript.Run(ctx, c, f.keys(r), on(br.Failures > 0), probeID, probeLease.Milliseconds(),
			rb, rr, tb, tr, cost, (2 * b.window()).Milliseconds(), maxCooldown.Milliseconds(), br.Open.Milliseconds(), maxWait.Milliseconds()).Slice()
		return err
	})
	if err != nil {
		return admission{}, err
	}
	if len(res) != 6 {
		return admission{}, fmt.Errorf("fleet: admit: unexpected reply %v", res)
	}
	n := func(i int) int64 { v, _ := res[i].(int64); return v }
	a := admission{wait: time.Duration(n(1)) * time.Millisecond, reserved: n(2) == 1, probe: n(3) == 1, status: int(n(4)), dirty: n(5) == 1}
	if a.status != http.StatusTooManyRequests && a.status != http.StatusServiceUnavailable {
		a.status = 0 // not a status that sets a cooldown: a bad writer's
	}
	switch n(0) {
	case 1:
		a.reason = WaitCooldown
	case 2:
		a.reason = WaitBreaker
	case 3:
		a.reason = WaitProbe
	case 4:
		a.reason = WaitBudget
	}
	return a, nil
}

// refund returns a reservation that will not be sent.
func (f *Fleet) refund(ctx context.Context, r route, b Budget, cost int) {
	rb, _ := bucket(b.Requests, b.window())
	tb, _ := bucket(b.Tokens, b.window())
	f.do(context.WithoutCancel(ctx), "refund", func(ctx context.Context, c *redis.Client) error {
		return refundScript.Run(ctx, c, f.keys(r)[2:], rb, tb, cost).Err()
	})
}

// record runs recordScript after a request.
func (f *Fleet) record(ctx context.Context, r route, cool time.Duration, status, outcome int, br Breaker, probeID string) error {
	return f.do(context.WithoutCancel(ctx), "record", func(ctx context.Context, c *redis.Client) error {
		return recordScript.Run(ctx, c, f.keys(r)[:2], cool.Milliseconds(), status, outcome,
			on(br.Failures > 0), br.Failures, br.Window.Milliseconds(), br.Open.Milliseconds(), probeID, maxCooldown.Milliseconds()).Err()
	})
}

func on(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
