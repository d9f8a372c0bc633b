package fleet_test

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/window"
	"github.com/redis/go-redis/v9"
)

// TestWindowsShared: a window one machine learns is what every other
// machine of the fleet reads, under a key without the model id's colon
// ambiguity, and the local store keeps answering while Redis is down.
func TestWindowsShared(t *testing.T) {
	rs := redistest.Start(t)
	a := &fleet.Windows{Fleet: open(t, rs.URL, nil), Local: &window.File{Path: window.Path(t.TempDir())}}
	b := &fleet.Windows{Fleet: open(t, rs.URL, nil), Local: &window.File{Path: window.Path(t.TempDir())}}
	ctx := t.Context()
	if n, err := b.Window(ctx, "local", "", "qwen3:8b"); n != 0 || err != nil {
		t.Fatalf("nothing learned yet: %d, %v", n, err)
	}
	if err := a.Learn(ctx, "local", "", "qwen3:8b", 8192); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name            string
		w               *fleet.Windows
		provider, model string
		want            int
	}{
		{"other machine", b, "local", "qwen3:8b", 8192},
		{"same machine", a, "local", "qwen3:8b", 8192},
		{"other model", b, "local", "qwen3", 0},
		{"other provider", b, "groq", "qwen3:8b", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n, err := tt.w.Window(ctx, tt.provider, "", tt.model); n != tt.want || err != nil {
				t.Errorf("window %d (%v), want %d", n, err, tt.want)
			}
		})
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	if ttl, err := rdb.TTL(ctx, "rally:window:local::qwen3%3A8b").Result(); err != nil || ttl <= 0 || ttl > fleet.WindowTTL {
		t.Errorf("key ttl %v (%v), want up to %v", ttl, err, fleet.WindowTTL)
	}

	rs.Stop()
	start := time.Now()
	if err := b.Learn(ctx, "local", "", "small", 2048); err != nil {
		t.Errorf("learn with redis down: %v (the file store has it)", err)
	}
	if n, err := b.Window(ctx, "local", "", "small"); n != 2048 || err != nil {
		t.Errorf("with redis down: %d (%v), want the local 2048", n, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("redis down cost %v", d)
	}
}
