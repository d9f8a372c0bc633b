package httpcall

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// TestDefaultTimeouts: zero options mean llm's defaults, the same ones
// the settings give a provider entry without timeouts.
func TestDefaultTimeouts(t *testing.T) {
	first, idle := timeouts(&llm.ClientOptions{})
	if first != llm.DefaultTimeout || idle != llm.DefaultIdleTimeout {
		t.Errorf("zero options: %v, %v", first, idle)
	}
	if first != 30*time.Second || idle != 60*time.Second {
		t.Errorf("defaults %v, %v, want DESIGN's 30 s and 60 s", first, idle)
	}
	first, idle = timeouts(&llm.ClientOptions{Timeout: time.Second, IdleTimeout: 2 * time.Second})
	if first != time.Second || idle != 2*time.Second {
		t.Errorf("set options: %v, %v", first, idle)
	}
}

func TestNewCall(t *testing.T) {
	o := &llm.ClientOptions{
		APIKey: "key-one-12345678",
		Header: http.Header{"Authorization": {"Bearer proxy-token-1234"}, "X-Goog-Api-Key": {"goog-key-12345678"}, "X-Title": {"rally"}},
	}
	m := &llm.Model{Provider: "from-model", BaseURL: "http://model.example/v1/"}
	c := NewCall(o, m, "api", "http://default.example", "default")
	if c.Provider != "from-model" || c.Base != "http://model.example/v1" || c.API != "api" {
		t.Errorf("call %+v", c)
	}
	for _, k := range []string{"key-one-12345678", "proxy-token-1234", "goog-key-12345678"} {
		if !slices.Contains(c.Keys, k) {
			t.Errorf("keys %q lack %q", c.Keys, k)
		}
	}
	c.SetKey("X-Api-Key", o.APIKey)
	c.Header.Set("X-Title", "changed")
	if o.Header.Get("X-Title") != "rally" || o.Header.Get("X-Api-Key") != "" {
		t.Errorf("the options' header was changed: %v", o.Header)
	}
	o.Provider, o.BaseURL = "mine", "http://mine.example"
	if c := NewCall(o, m, "api", "", "default"); c.Provider != "mine" || c.Base != "http://mine.example" {
		t.Errorf("options do not win: %+v", c)
	}
	if c := NewCall(&llm.ClientOptions{}, &llm.Model{}, "api", "http://default.example", "default"); c.Provider != "default" || c.Base != "http://default.example" || len(c.Keys) != 0 {
		t.Errorf("defaults: %+v", c)
	}
}

func TestErrorWording(t *testing.T) {
	c := &Call{Provider: "acme", Keys: []string{"zzSECRETRALLYKEY0123456789999"}}
	if got := c.DecodeError("chunk", errString("bad"), []byte(`{"k":"zzSECRETRALLYK***999"}`)).Error(); got != `acme: decode chunk: bad: "{\"k\":\"[redacted]\"}"` {
		t.Errorf("decode error %q", got)
	}
	if got := c.StreamError([]byte(`{"error":{"message":"key zzSECRETRALLYKEY0 bad"}}`)); got.Message != "key [redacted] bad" || !got.MidStream || got.Provider != "acme" {
		t.Errorf("stream error %+v", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
