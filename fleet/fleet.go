// Package fleet shares what one rally process learns about its providers
// with every other rally process through Redis: usage-limit
// marks (Marks, behind auth.Marks), learned context windows (Windows),
// cooldowns from 429/503 server hints, per-credential request and token
// budgets, and a circuit breaker per provider and model (Gate, around one
// credential's llm.Provider).
//
// Everything is keyed by provider and key fingerprint (auth.Fingerprint),
// never by the key. Redis is a helper, not a dependency: every call is
// bounded by a short timeout, and a Redis that does not answer puts the
// Fleet in local mode (the file store for marks, nothing shared otherwise)
// with one warning, while a background loop reconnects.
//
// Learned context windows are shared too (Windows, behind the
// session's Windows interface, beside package window's file store).
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultTimeout bounds each Redis call when Config.Timeout is 0.
const DefaultTimeout = 200 * time.Millisecond

// DefaultReconnect is how often a Fleet in local mode pings Redis.
const DefaultReconnect = time.Second

// prefix starts every key rally writes, so a shared Redis can hold other
// data and `redis-cli --scan --pattern 'rally:*'` shows rally's. A
// namespace (Config.Namespace) makes it "rally/<namespace>:", which no
// key of the default namespace or of another one starts with.
const prefix = "rally:"

// namespacePattern is what a namespace may be: a name, so that it cannot
// reach into another namespace's keys or hold a glob.
const namespacePattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"

// namespaceRe is compiled on first use: its counted repetition makes a
// large program (60 KB and 860 allocations), which a process that never
// opens a fleet (rally --version) must not pay at start-up.
var namespaceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(namespacePattern) })

// ErrLocal is returned, without touching the network, while the Fleet is in
// local mode (Redis did not answer and has not answered a ping since).
var ErrLocal = errors.New("fleet: redis unavailable; working locally")

// Config opens a Fleet. Only URL is required.
type Config struct {
	// URL is redis://[user@]host:port/db or rediss:// for TLS.
	URL string
	// Password, when not empty, replaces any password in URL. Callers read
	// it from an environment variable; it is never logged or shown.
	Password string
	// Namespace separates teams sharing one Redis: its processes share
	// nothing with another namespace's. Empty is the default namespace.
	Namespace string
	// Timeout bounds each Redis call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Reconnect is the ping interval in local mode; 0 means DefaultReconnect.
	Reconnect time.Duration
	// Log receives every change between shared and local mode; nil
	// discards it.
	Log *slog.Logger
	// Warn, when set, is told once per Fleet, in one line for a human, the
	// first time Redis fails (later outages go to Log only).
	Warn func(msg string)
}

// Fleet is a connection to the shared Redis, with its health. It is safe
// for concurrent use; Close stops its background reconnect loop.
type Fleet struct {
	rdb     *redis.Client
	addr    string // host:port, for messages; never the password
	prefix  string // of every key: prefix, or its namespace's
	timeout time.Duration
	every   time.Duration
	log     *slog.Logger
	warn    func(string)

	local  atomic.Bool
	warned atomic.Bool

	mu      sync.Mutex
	probing bool
	done    chan struct{}
	closed  bool
	wg      sync.WaitGroup
}

// Open checks cfg and returns a Fleet. It does not dial: the first call
// does, so a Redis that is down at start costs one timeout, not a failed
// run.
func Open(cfg Config) (*Fleet, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		// url.Parse's error quotes the URL, which may hold a password.
		return nil, fmt.Errorf("fleet: redis url: want redis://host:port or rediss://host:port, got %q", redacted(cfg.URL))
	}
	if cfg.Namespace != "" && !namespaceRe().MatchString(cfg.Namespace) {
		return nil, fmt.Errorf("fleet: namespace %q: want letters, digits, _ and - (up to 64)", cfg.Namespace)
	}
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("fleet: redis url %q: %s", redacted(cfg.URL), strings.TrimPrefix(err.Error(), "redis: "))
	}
	if cfg.Password != "" {
		opt.Password = cfg.Password
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// Every wait inside the client is bounded by the timeout and nothing
	// is retried there: a call either answers in time or the Fleet goes
	// local, so a prompt never waits on Redis longer than one timeout.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	opt.DialerRetries = 1
	opt.DisableIdentity = true
	opt.Protocol = 2
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	f := &Fleet{
		rdb:     redis.NewClient(opt),
		addr:    opt.Addr,
		prefix:  prefix,
		timeout: timeout,
		every:   cfg.Reconnect,
		log:     cfg.Log,
		warn:    cfg.Warn,
		done:    make(chan struct{}),
	}
	if f.every <= 0 {
		f.every = DefaultReconnect
	}
	if cfg.Namespace != "" {
		f.prefix = "rally/" + cfg.Namespace + ":"
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	return f, nil
}

// redacted is u with any password replaced by xxxxx, or a placeholder
// when it does not parse.
func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

// Addr is the Redis host:port, for messages.
func (f *Fleet) Addr() string { return f.addr }

// Local reports whether the Fleet is in local mode.
func (f *Fleet) Local() bool { return f.local.Load() }

// Close stops the reconnect loop and closes the connections.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	f.mu.Unlock()
	f.wg.Wait()
	return f.rdb.Close()
}

// do runs one Redis exchange within the timeout. In local mode it returns
// ErrLocal at once. A failure of the connection (not a Redis error reply,
// not the caller's own cancellation) switches to local mode.
func (f *Fleet) do(ctx context.Context, op string, fn func(ctx context.Context, c *redis.Client) error) error {
	if f.local.Load() {
		return ErrLocal
	}
	// The client watches a deadline, not a cancellation, while it waits
	// on the socket: a Redis that accepted the connection and went silent
	// would hold a Ctrl-C for the whole timeout (issue 24). So the
	// exchange runs aside, and a cancellation returns at once, leaving it
	// the timeout at most to end; callers read what fn filled in only
	// when do returns nil.
	done := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, f.timeout)
		defer cancel()
		done <- fn(cctx, f.rdb)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	switch {
	case err == nil, errors.Is(err, redis.Nil):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	}
	var reply redis.Error
	if errors.As(err, &reply) && !isConnReply(reply.Error()) {
		return fmt.Errorf("fleet: %s: %w", op, err)
	}
	f.goLocal(op, err)
	return &downError{op: op, cause: short(err)}
}

// downError is the failure that put the Fleet in local mode; it is
// ErrLocal for errors.Is.
type downError struct{ op, cause string }

func (e *downError) Error() string {
	return "fleet: " + e.op + ": redis unavailable: " + e.cause
}

func (e *downError) Is(target error) bool { return target == ErrLocal }

// isConnReply: replies that mean this server cannot serve us now (loading,
// a replica, auth), which are outages rather than bugs.
func isConnReply(msg string) bool {
	for _, p := range []string{"LOADING", "NOAUTH", "WRONGPASS", "READONLY", "MASTERDOWN", "BUSY", "CLUSTERDOWN"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// goLocal enters local mode and starts the reconnect loop.
func (f *Fleet) goLocal(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.probing {
		return
	}
	f.local.Store(true)
	f.probing = true
	f.log.Warn("fleet: redis unavailable; working locally until it answers", "redis", f.addr, "op", op, "err", err.Error())
	if f.warn != nil && !f.warned.Swap(true) {
		f.warn(fmt.Sprintf("fleet: redis at %s is not answering (%s); working locally, nothing is shared until it is back", f.addr, short(err)))
	}
	f.wg.Add(1)
	go f.reconnect()
}

// reconnect pings Redis until it answers, then leaves local mode.
func (f *Fleet) reconnect() {
	defer f.wg.Done()
	t := time.NewTicker(f.every)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
		err := f.rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			f.mu.Lock()
			f.probing = false
			f.local.Store(false)
			f.mu.Unlock()
			f.log.Info("fleet: redis is back; sharing again", "redis", f.addr)
			return
		}
	}
}

// short is the first line of err, without the address (already said).
func short(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within the timeout"
	}
	return s
}

// Ping checks that Redis answers, within the timeout.
func (f *Fleet) Ping(ctx context.Context) error {
	return f.do(ctx, "ping", func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
}

// escaper keeps key parts free of the separator and of SCAN's glob
// characters, so a model id with a colon (qwen3:8b) cannot collide with
// another key; unparts reverses it.
var escaper = strings.NewReplacer("%", "%25", ":", "%3A", "*", "%2A", "?", "%3F", "[", "%5B", "]", "%5D", `\`, "%5C")

// key joins parts under the Fleet's prefix.
func (f *Fleet) key(kind string, parts ...string) string {
	var b strings.Builder
	b.WriteString(f.prefix)
	b.WriteString(kind)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(escaper.Replace(p))
	}
	return b.String()
}

// unparts returns the parts of a key made by key(kind, ...).
func (f *Fleet) unparts(k, kind string) []string {
	rest, ok := strings.CutPrefix(k, f.prefix+kind+":")
	if !ok {
		return nil
	}
	parts := strings.Split(rest, ":")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	return parts
}
