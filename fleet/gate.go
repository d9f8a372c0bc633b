package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Wait is one hold-up of a request by the fleet, reported to Gate.OnWait
// before the wait starts.
type Wait struct {
	Reason   string // WaitCooldown, WaitBreaker, WaitProbe or WaitBudget
	Provider string
	Model    string
	// Credential is the credential's id, Fingerprint its key's
	// fingerprint; never the key.
	Credential, Fingerprint string
	Delay                   time.Duration
	// Status is the HTTP status that set a cooldown (429, 503).
	Status int
}

// String says what the wait is for, in one line for a human.
func (w Wait) String() string {
	who := w.Provider
	if w.Credential != "" {
		who += " " + w.Credential
	}
	d := w.Delay.Round(100 * time.Millisecond)
	switch w.Reason {
	case WaitCooldown:
		if w.Status == 0 { // Redis held no status that sets a cooldown
			return fmt.Sprintf("fleet: waiting %s: another agent was told to wait on %s (key %s)", d, who, w.Fingerprint)
		}
		return fmt.Sprintf("fleet: waiting %s: another agent got %d on %s (key %s)", d, w.Status, who, w.Fingerprint)
	case WaitBreaker:
		return fmt.Sprintf("fleet: waiting %s: %s/%s failed repeatedly across the fleet (circuit breaker open)", d, w.Provider, w.Model)
	case WaitProbe:
		return fmt.Sprintf("fleet: waiting for another agent's probe of %s/%s", w.Provider, w.Model)
	}
	return fmt.Sprintf("fleet: waiting %s: request budget of %s (key %s) is spent for now", d, who, w.Fingerprint)
}

// Gate is an llm.Provider for one credential that asks the fleet before
// each request (the credential's cooldown, the provider/model's breaker,
// the credential's budget) and tells the fleet what the request met
// afterwards (429/503 hints, transient failures, successes). With a nil
// Fleet it is Provider itself.
//
// A Gate sees what Provider.Stream returns: an HTTP error or a transport
// failure before the stream starts, or a started stream, which counts as
// the provider answering. An error event later inside a 200 stream is not
// seen: llm.Stream offers no way to watch its end without re-building it.
type Gate struct {
	Provider llm.Provider
	Fleet    *Fleet
	// ProviderName and Model name the route; Credential is the
	// credential's id (for messages) and Fingerprint auth.Fingerprint of
	// its key (for keys in Redis).
	ProviderName, Model, Credential, Fingerprint string
	Budget                                       Budget
	Breaker                                      Breaker
	// Estimate returns a request's input tokens for the token budget; nil
	// counts 0 (only requests are limited).
	Estimate func(*llm.Request) int
	// MaxWait is the longest a cooldown or an open breaker is waited out
	// here; a longer one fails the request at once with a 429 or 503
	// carrying the time left as retry-after-ms, so the session decides
	// (switch credential, fallback model, or fail naming the time) as it
	// would for the server's own answer. 0 means a minute.
	MaxWait time.Duration
	// OnWait, when set, is told of every wait before it starts.
	OnWait func(Wait)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

var _ llm.Provider = (*Gate)(nil)

// Stream implements llm.Provider.
func (g *Gate) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	if g.Fleet == nil {
		return g.Provider.Stream(ctx, req)
	}
	r := route{g.ProviderName, g.Model, g.Fingerprint}
	if r.model == "" {
		r.model = req.Model.ID
	}
	br := g.breaker()
	id := probeID()
	cost := 0
	if g.Estimate != nil && g.Budget.Tokens > 0 {
		cost = g.Estimate(req)
	}
	a, err := g.admit(ctx, r, br, id, cost)
	if err != nil {
		return nil, err
	}
	s, err := g.Provider.Stream(ctx, req)
	cool, status, outcome := judge(err, g.now())
	if ctx.Err() != nil {
		outcome = outcomeNeutral // the caller left: nothing learned
	}
	// A success on a clean breaker changes nothing: the common request
	// costs one round trip, not two.
	if a.probe || cool > 0 || outcome == outcomeFailed || outcome == outcomeOK && a.dirty {
		g.Fleet.record(ctx, r, cool, status, outcome, br, id)
	}
	return s, err
}

// admit waits until the fleet lets the request go, and returns the
// admission that let it. Redis trouble lets the request go: the fleet is a
// help, never a gate that stays shut.
func (g *Gate) admit(ctx context.Context, r route, br Breaker, id string, cost int) (admission, error) {
	toldProbe := false
	var probing time.Duration // waited so far for another agent's probe
	for {
		a, err := g.Fleet.admit(ctx, r, g.Budget, br, id, cost, g.maxWait())
		if err != nil {
			if ctx.Err() != nil {
				return admission{}, ctx.Err()
			}
			return admission{}, nil
		}
		if a.reason == "" {
			return a, nil
		}
		// Every shared wait is capped like the session's own (maxDelayMs):
		// a longer one fails at once, naming the time, and the session
		// decides. A probe is waited for 250 ms at a time, so its total
		// counts.
		if a.reason == WaitProbe {
			probing += a.wait
		}
		if a.wait > g.maxWait() || probing > g.maxWait() {
			if a.reserved {
				g.Fleet.refund(ctx, r, g.Budget, cost)
			}
			if a.probe {
				g.Fleet.record(ctx, r, 0, 0, outcomeNeutral, br, id)
			}
			return admission{}, g.tooLong(a)
		}
		// A probe wait is re-asked every 250 ms; it is told once.
		if g.OnWait != nil && (a.reason != WaitProbe || !toldProbe) {
			toldProbe = toldProbe || a.reason == WaitProbe
			g.OnWait(Wait{Reason: a.reason, Provider: r.provider, Model: r.model, Credential: g.Credential, Fingerprint: r.fingerprint, Delay: a.wait, Status: a.status})
		}
		t := time.NewTimer(a.wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if a.reserved {
				g.Fleet.refund(ctx, r, g.Budget, cost)
			}
			if a.probe { // let another request probe at once
				g.Fleet.record(ctx, r, 0, 0, outcomeNeutral, br, id)
			}
			return admission{}, ctx.Err()
		case <-t.C:
		}
		if a.reason == WaitBudget {
			return a, nil // the budget is reserved: go
		}
	}
}

// tooLong is the error for a shared wait longer than MaxWait: the answer
// the server gave the other agent, as if given to this one.
func (g *Gate) tooLong(a admission) error {
	status, msg := http.StatusServiceUnavailable, fmt.Sprintf("fleet: %s/%s failed repeatedly across the fleet; circuit breaker open for %s", g.ProviderName, g.Model, a.wait.Round(time.Second))
	switch a.reason {
	case WaitCooldown:
		status = a.status
		if status == 0 {
			status = http.StatusTooManyRequests
		}
		msg = fmt.Sprintf("fleet: another agent was told to wait %s on this key (%d)", a.wait.Round(time.Second), status)
	case WaitProbe:
		msg = fmt.Sprintf("fleet: waited %s for another agent's probe of %s/%s, longer than retry.maxDelayMs", g.maxWait().Round(time.Second), g.ProviderName, g.Model)
	case WaitBudget:
		status = http.StatusTooManyRequests
		msg = fmt.Sprintf("fleet: the request budget of %s (key %s) is spent for %s, longer than retry.maxDelayMs", g.ProviderName, g.Fingerprint, a.wait.Round(time.Second))
	}
	return &llm.APIError{Provider: g.ProviderName, StatusCode: status, Message: msg,
		Header: http.Header{"Retry-After-Ms": {strconv.FormatInt(a.wait.Milliseconds(), 10)}}}
}

// judge reads what a request met: a cooldown to share (a 429 or 503 with
// a server hint, when the failure is transient: a usage limit is a mark,
// recorded by the rotation) and the outcome for the breaker. A rate limit
// is the credential's business, not the provider's health, so a 429
// neither opens nor closes the breaker.
func judge(err error, now time.Time) (cool time.Duration, status, outcome int) {
	if err == nil {
		return 0, 0, outcomeOK
	}
	if errors.Is(err, context.Canceled) {
		return 0, 0, outcomeNeutral
	}
	f := retry.FailureOf(err)
	v := retry.Classify(f)
	if v.Class == retry.Transient && (f.Status == http.StatusTooManyRequests || f.Status == http.StatusServiceUnavailable) {
		cool = retry.Hint(f, now)
	}
	switch {
	case v.Class == retry.Transient && f.Status != http.StatusTooManyRequests:
		outcome = outcomeFailed
	case v.Class == retry.Fatal && f.Status != 0:
		outcome = outcomeOK // the provider is up and said no
	}
	return cool, f.Status, outcome
}

func (g *Gate) breaker() Breaker {
	b := g.Breaker
	if b.Window <= 0 {
		b.Window = time.Minute
	}
	if b.Open <= 0 {
		b.Open = 30 * time.Second
	}
	return b
}

func (g *Gate) maxWait() time.Duration {
	if g.MaxWait <= 0 {
		return time.Minute
	}
	return g.MaxWait
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// probeID names one request, so the breaker knows whose probe it holds.
func probeID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
