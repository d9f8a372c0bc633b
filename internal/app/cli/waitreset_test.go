package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rally-agent/rally/settings"
)

// TestWaitForResetFlag: --wait-for-reset alone turns the setting on with
// its maxWaitMs; =DUR sets maxWaitMs, by the setting's own schema range.
func TestWaitForResetFlag(t *testing.T) {
	tests := []struct {
		args    []string
		enabled bool
		maxWait int
		err     string
	}{
		{nil, false, settings.DefaultMaxWaitMs, ""},
		{[]string{"--wait-for-reset"}, true, settings.DefaultMaxWaitMs, ""},
		{[]string{"--wait-for-reset=3h"}, true, 3 * 3600 * 1000, ""},
		{[]string{"--wait-for-reset=90m", "-p", "hi"}, true, 90 * 60 * 1000, ""},
		{[]string{"--wait-for-reset=forever"}, false, 0, `"forever" is not a duration`},
		{[]string{"--wait-for-reset=200h"}, false, 0, "from 1 to 604800000, got 720000000"},
		{[]string{"--wait-for-reset=-1h"}, false, 0, "got -3600000"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var f runFlags
			cmd := &cobra.Command{Use: "rally", RunE: func(*cobra.Command, []string) error { return nil }}
			f.register(cmd)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			st := settings.Default()
			err := applyWaitForReset(st, f.waitForReset)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := st.Retry.WaitForReset; w.Enabled != tt.enabled || w.MaxWaitMs != tt.maxWait {
				t.Errorf("waitForReset %+v, want enabled %v maxWaitMs %d", w, tt.enabled, tt.maxWait)
			}
		})
	}
}
