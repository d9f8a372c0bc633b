package fleet

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/rally-agent/rally/window"
	"github.com/redis/go-redis/v9"
)

// WindowTTL is how long a learned window stays in Redis after it was last
// stated: long enough to outlive any session, short enough that a server
// reconfigured long ago is asked again.
const WindowTTL = 30 * 24 * time.Hour

// Windows shares the context windows learned from overflow errors (DESIGN
// §3.4) through Redis, one key per provider and model, and keeps them in
// Local too, which answers while Redis is away. It has the method set of
// the session's Windows interface.
type Windows struct {
	Fleet *Fleet
	// Local is the machine's store; nil keeps windows in Redis only.
	Local *window.File
}

func windowKey(provider, model string) string { return key("window", provider, model) }

// Window returns the window the fleet learned for provider's model, else
// the local store's, else 0. An unreachable Redis leaves the local answer,
// without an error: the Fleet already warned.
func (w *Windows) Window(ctx context.Context, provider, model string) (int, error) {
	var v string
	err := w.Fleet.do(ctx, "window", func(ctx context.Context, c *redis.Client) error {
		var err error
		v, err = c.Get(ctx, windowKey(provider, model)).Result()
		return err
	})
	switch {
	case err == nil:
		if n, perr := strconv.Atoi(v); perr == nil && n > 0 {
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
	return w.Local.Window(ctx, provider, model)
}

// Learn records the window in the local store and in Redis; it fails only
// when neither took it.
func (w *Windows) Learn(ctx context.Context, provider, model string, tokens int) error {
	var local error
	if w.Local != nil {
		local = w.Local.Learn(ctx, provider, model, tokens)
	}
	err := w.Fleet.do(ctx, "learn window", func(ctx context.Context, c *redis.Client) error {
		return c.Set(ctx, windowKey(provider, model), tokens, WindowTTL).Err()
	})
	if err != nil && (w.Local == nil || local != nil) {
		return errors.Join(local, err)
	}
	return nil
}
