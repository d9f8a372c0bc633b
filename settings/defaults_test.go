package settings

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// TestDefaultsAreTheLibrarys: the settings' defaults are the library's,
// so a provider configured in settings.json and a client or policy built
// in Go with zero values behave alike (issue 11, item 5).
func TestDefaultsAreTheLibrarys(t *testing.T) {
	d := Default()
	for name, p := range d.Providers {
		if p.Timeout() != llm.DefaultTimeout || p.IdleTimeout() != llm.DefaultIdleTimeout || p.MaxEventBytes != llm.DefaultMaxEventBytes {
			t.Errorf("provider %s: timeout %v idle %v max event %d", name, p.Timeout(), p.IdleTimeout(), p.MaxEventBytes)
		}
	}
	var zero Provider
	if zero.Timeout() != llm.DefaultTimeout || zero.IdleTimeout() != llm.DefaultIdleTimeout {
		t.Errorf("zero provider: %v, %v", zero.Timeout(), zero.IdleTimeout())
	}
	got, want := d.RetryPolicy("openai"), retry.Default()
	if got.MaxRetries != want.MaxRetries || got.BaseDelay != want.BaseDelay || got.MaxDelay != want.MaxDelay || got.Disabled || got.Jitter != 0 {
		t.Errorf("retry policy %+v, the library's %+v", got, want)
	}
	// DESIGN §2.4 and §5 name the numbers; both places must keep them.
	if llm.DefaultTimeout != 30*time.Second || llm.DefaultIdleTimeout != 60*time.Second || llm.DefaultMaxEventBytes != 64<<20 ||
		want.MaxRetries != 3 || want.BaseDelay != 2*time.Second || want.MaxDelay != 60*time.Second {
		t.Errorf("defaults drifted from DESIGN: %v %v %d %+v", llm.DefaultTimeout, llm.DefaultIdleTimeout, llm.DefaultMaxEventBytes, want)
	}
}
