package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/redis/go-redis/v9"
)

// Marks keeps usage-limit marks in Redis, where every rally process of the
// fleet sees them, and in Local (the machine's file store), which keeps
// working while Redis is away. Each mark is one Redis key that expires by
// itself when the block ends.
type Marks struct {
	Fleet *Fleet
	// Local is the machine's own store; nil keeps marks in Redis only.
	Local auth.Marks
}

var _ auth.Marks = (*Marks)(nil)

// markKey names a mark by provider and fingerprint: the same key under two
// ids, or on two machines under different ids, is one mark. A mark without
// a fingerprint (it blocks an id whatever its key) is named by id.
func (m *Marks) key(mk auth.Mark) string {
	if mk.Key != "" {
		return m.Fleet.key("mark", mk.Provider, mk.Key)
	}
	return m.Fleet.key("mark", mk.Provider, "id="+mk.ID)
}

// index is the set of the namespace's mark keys. Reading marks reads it,
// never SCAN, whose cost is the whole keyspace's: a Redis shared with
// millions of other keys must not make every request time out.
func (m *Marks) index() string { return m.Fleet.key("marks") }

// maxMark is the longest a mark read from Redis may block a credential:
// usage limits reset within a month. A later end is a bad writer's.
const maxMark = 31 * 24 * time.Hour

// blockScript stores a mark unless a later one is there, and expires it at
// its end; the index lists it until then. KEYS[1] the mark, KEYS[2] the
// index; ARGV[1] its JSON, ARGV[2] its end (Unix ms).
var blockScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
if old then
  local ok, o = pcall(cjson.decode, old)
  if ok and type(o) == 'table' and tonumber(o.untilMs) and tonumber(o.untilMs) >= tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('SADD', KEYS[2], KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local left = redis.call('PTTL', KEYS[2])
if left < 0 or now + left < tonumber(ARGV[2]) then
  redis.call('PEXPIREAT', KEYS[2], ARGV[2])
end
return 1
`)

// stored is a mark as Redis holds it: the auth.Mark plus its end in Unix
// ms, which the script compares.
type stored struct {
	auth.Mark
	UntilMs int64 `json:"untilMs"`
}

// Block implements auth.Marks: in the local store and in Redis. It fails
// only when neither took the mark.
func (m *Marks) Block(ctx context.Context, mk auth.Mark) error {
	var local error
	if m.Local != nil {
		local = m.Local.Block(ctx, mk)
	}
	if !mk.Until.After(time.Now()) {
		return local
	}
	b, err := json.Marshal(stored{mk, mk.Until.UnixMilli()})
	if err != nil {
		return fmt.Errorf("fleet: block: %w", err)
	}
	err = m.Fleet.do(ctx, "block", func(ctx context.Context, c *redis.Client) error {
		return blockScript.Run(ctx, c, []string{m.key(mk), m.index()}, b, mk.Until.UnixMilli()).Err()
	})
	if err != nil && (m.Local == nil || local != nil) {
		return errors.Join(local, err)
	}
	return nil
}

// Blocked implements auth.Marks: the marks of Redis and of the local store
// together. An unreachable Redis leaves the local ones, without an error:
// the Fleet already warned.
func (m *Marks) Blocked(ctx context.Context, provider string) ([]auth.Mark, error) {
	var out []auth.Mark
	var local error
	if m.Local != nil {
		out, local = m.Local.Blocked(ctx, provider)
	}
	shared, err := m.shared(ctx, provider)
	if err != nil && !errors.Is(err, ErrLocal) {
		return out, errors.Join(local, err)
	}
	return append(out, shared...), local
}

// shared reads provider's marks ("" for all) from Redis, by the index.
// A key the index lists that has expired is taken off it.
func (m *Marks) shared(ctx context.Context, provider string) ([]auth.Mark, error) {
	var keys []string
	var vals []any
	err := m.Fleet.do(ctx, "marks", func(ctx context.Context, c *redis.Client) error {
		var err error
		if keys, err = c.SMembers(ctx, m.index()).Result(); err != nil || len(keys) == 0 {
			return err
		}
		if vals, err = c.MGet(ctx, keys...).Result(); err != nil {
			return err
		}
		var gone []any
		for i, v := range vals {
			if v == nil {
				gone = append(gone, keys[i])
			}
		}
		if len(gone) > 0 {
			return c.SRem(ctx, m.index(), gone...).Err()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []auth.Mark
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // expired
		}
		var st stored
		if json.Unmarshal([]byte(s), &st) != nil || !st.Until.After(now) || st.Provider == "" {
			continue
		}
		if st.Until.After(now.Add(maxMark)) {
			st.Until = now.Add(maxMark)
		}
		if provider == "" || st.Provider == provider {
			out = append(out, st.Mark)
		}
	}
	return out, nil
}

// scan lists the keys matching pattern. Rally keeps few keys (one per
// credential and model in use), so one pass is cheap.
func scan(ctx context.Context, c *redis.Client, pattern string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, pattern, 256).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}
