package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rally-agent/rally/settings"
)

// waitForResetOn is --wait-for-reset given without a value: on, with the
// settings' maxWaitMs.
const waitForResetOn = "on"

// registerWaitForReset adds --wait-for-reset[=DUR] to the run's flags.
func (f *runFlags) registerWaitForReset(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.waitForReset, "wait-for-reset", "", "wait out a usage limit whose stated reset is at most DUR away (default retry.waitForReset.maxWaitMs, 6h) when no other credential or model is left, then retry once")
	fl.Lookup("wait-for-reset").NoOptDefVal = waitForResetOn
}

// applyWaitForReset turns retry.waitForReset on for --wait-for-reset,
// with DUR as its maxWaitMs, checked by the setting's own schema rule.
func applyWaitForReset(st *settings.Settings, flag string) error {
	if flag == "" {
		return nil
	}
	w := st.Retry.WaitForReset
	w.Enabled = true
	if flag != waitForResetOn {
		d, err := time.ParseDuration(flag)
		if err != nil {
			return &exitError{2, fmt.Errorf("--wait-for-reset: %q is not a duration like 3h or 90m", flag)}
		}
		file, err := settings.ParseFile(settings.Source{Name: "--wait-for-reset"}, nil)
		if err == nil {
			err = file.Set("retry.waitForReset.maxWaitMs", int(d/time.Millisecond))
		}
		if err == nil {
			_, err = file.Check()
		}
		if errs := settings.Errors(err); len(errs) > 0 {
			return &exitError{2, fmt.Errorf("--wait-for-reset %s: maxWaitMs %s", flag, errs[0].Msg)}
		}
		if err != nil {
			return &exitError{2, err}
		}
		w.MaxWaitMs = int(d / time.Millisecond)
	}
	st.Retry.WaitForReset = w
	return nil
}
