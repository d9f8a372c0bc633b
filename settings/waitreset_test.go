package settings

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/retry"
)

func TestWaitForResetSetting(t *testing.T) {
	tests := []struct {
		name string
		file string
		want retry.WaitForReset
	}{
		{"default is off", `{}`, retry.WaitForReset{MaxWait: retry.DefaultMaxWait, Margin: retry.DefaultResetMargin}},
		{"enabled keeps default limits", `{"retry": {"waitForReset": {"enabled": true}}}`, retry.WaitForReset{Enabled: true, MaxWait: retry.DefaultMaxWait, Margin: retry.DefaultResetMargin}},
		{"own limits", `{"retry": {"waitForReset": {"enabled": true, "maxWaitMs": 3600000, "marginMs": 1500}}}`, retry.WaitForReset{Enabled: true, MaxWait: time.Hour, Margin: 1500 * time.Millisecond}},
		{"margin zero is none", `{"retry": {"waitForReset": {"enabled": true, "marginMs": 0}}}`, retry.WaitForReset{Enabled: true, MaxWait: retry.DefaultMaxWait, Margin: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := Load(layout(t, tt.file, ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.RetryPolicy("openai").WaitForReset; got != tt.want {
				t.Errorf("WaitForReset = %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("zero maxWaitMs is refused", func(t *testing.T) {
		if _, _, err := Load(layout(t, `{"retry": {"waitForReset": {"maxWaitMs": 0}}}`, "")); err == nil {
			t.Error("maxWaitMs 0 loaded without an error")
		}
	})
}
