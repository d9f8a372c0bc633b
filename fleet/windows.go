package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/window"
	"github.com/redis/go-redis/v9"
)

// WindowTTL is how long a learned window stays in Redis after it was last
// stated: long enough to outlive any session, short enough that a server
// reconfigured long ago is asked again.
const WindowTTL = 30 * 24 * time.Hour

// Windows shares the context windows learned from overflow errors (DESIGN
// §3.4) through Redis, one key per provider, server and model, and keeps them in
// Local too, which answers while Redis is away. It has the method set of
// the session's Windows interface.
type Windows struct {
	Fleet *Fleet
	// Local is the machine's store; nil keeps windows in Redis only.
	Local *window.File
}

// key names a window by provider, server and model (window.Server): keys
// of the form before the server was part of them are never read again,
// and expire.
func (w *Windows) key(provider, baseURL, model string) string {
	return w.Fleet.key("window", provider, window.Server(baseURL), model)
}

// Window returns the window the fleet learned for provider's model at
// baseURL, else the local store's, else 0. A value in Redis that no
// overflow could state is not used (window.File's rule). An unreachable
// Redis leaves the local answer, without an error: the Fleet already
// warned.
func (w *Windows) Window(ctx context.Context, provider, baseURL, model string) (int, error) {
	var v string
	err := w.Fleet.do(ctx, "window", func(ctx context.Context, c *redis.Client) error {
		var err error
		v, err = c.Get(ctx, w.key(provider, baseURL, model)).Result()
		return err
	})
	switch {
	case err == nil:
		if n, perr := strconv.Atoi(v); perr == nil && retry.PlausibleWindow(n) {
			return n, nil
		}
	case errors.Is(err, redis.Nil), errors.Is(err, ErrLocal):
		// Nothing shared, or Redis is away: the local store answers.
	case w.Local == nil:
		return 0, err
	}
	if w.Local == nil {
		return 0, nil
	}
	return w.Local.Window(ctx, provider, baseURL, model)
}

// Learn records the window in the local store and in Redis; it fails only
// when neither took it.
func (w *Windows) Learn(ctx context.Context, provider, baseURL, model string, tokens int) error {
	if !retry.PlausibleWindow(tokens) {
		return fmt.Errorf("fleet: learn window: %d tokens is no context window", tokens)
	}
	var local error
	if w.Local != nil {
		local = w.Local.Learn(ctx, provider, baseURL, model, tokens)
	}
	err := w.Fleet.do(ctx, "learn window", func(ctx context.Context, c *redis.Client) error {
		return c.Set(ctx, w.key(provider, baseURL, model), tokens, WindowTTL).Err()
	})
	if err != nil && (w.Local == nil || local != nil) {
		return errors.Join(local, err)
	}
	return nil
}
