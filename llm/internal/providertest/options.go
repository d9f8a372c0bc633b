package providertest

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// What llm.ClientOptions mean to every client alike: the provider name
// that starts its errors, the cap on one event, the redaction of keys.

// ProviderName: a client given a provider name uses it in its messages and
// starts every error with it: an HTTP error, a failed connection, a
// failed read of the stream.
func (c *Client) ProviderName(t *testing.T) {
	const name = "acme"
	opts := func(url string) llm.ClientOptions {
		return llm.ClientOptions{BaseURL: url, APIKey: c.Key, Provider: name, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	}
	t.Run("message", func(t *testing.T) {
		m, err, _ := Run(t, c.New(opts(NewServer(t, c.Wire.Stream(c.Whole("hi"))).URL)), Ask(c.Model, "?"))
		if err != nil || m.Provider != name {
			t.Errorf("provider %q err %v", m.Provider, err)
		}
	})
	t.Run("http error", func(t *testing.T) {
		s := NewServer(t, c.Wire.Fail(503, `{"error":{"message":"busy"}}`))
		_, err := c.New(opts(s.URL)).Stream(t.Context(), Ask(c.Model, "?"))
		e, ok := llm.AsAPIError(err)
		if !ok || e.Provider != name || !strings.HasPrefix(err.Error(), name+": 503 ") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("connection", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String()
		l.Close() // nothing listens there now
		_, err = c.New(opts(url)).Stream(t.Context(), Ask(c.Model, "?"))
		if err == nil || !strings.HasPrefix(err.Error(), name+": send request: ") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("read stream", func(t *testing.T) {
		o := opts(NewServer(t, c.Wire.Stream(c.Whole(strings.Repeat("x", 4096)))).URL)
		o.MaxEventBytes = 1024
		_, err, _ := Run(t, c.New(o), Ask(c.Model, "?"))
		if err == nil || !strings.HasPrefix(err.Error(), name+": read stream: ") {
			t.Errorf("error %v", err)
		}
	})
}

// EventTooLarge: an event over MaxEventBytes fails the stream at once,
// fatally, saying so; the same stream under the default cap is fine.
func (c *Client) EventTooLarge(t *testing.T) {
	s := NewServer(t, c.Wire.Stream(c.Whole(strings.Repeat("x", 64<<10))))
	o := llm.ClientOptions{BaseURL: s.URL, APIKey: c.Key, MaxEventBytes: 16 << 10}
	m, err, _ := Run(t, c.New(o), Ask(c.Model, "?"))
	if m.StopReason != llm.Error || !errors.Is(err, llm.ErrEventTooLarge) {
		t.Fatalf("stop %q err %v", m.StopReason, err)
	}
	if !strings.HasPrefix(err.Error(), c.Name+": read stream: ") || !strings.Contains(err.Error(), "event too large") {
		t.Errorf("error %q", err)
	}
	if v := llm.Classify(err); v.Class != retry.Fatal {
		t.Errorf("classified %v (%s), want fatal", v.Class, v.Reason)
	}
	o.MaxEventBytes = 0
	if m, err, _ := Run(t, c.New(o), Ask(c.Model, "?")); err != nil || len(m.TextOf()) != 64<<10 {
		t.Errorf("under the default cap: %d bytes, err %v", len(m.TextOf()), err)
	}
}

// bareKey is a key with no well-known prefix: only the redaction of runs
// of a known key (internal/redact) hides a partial echo of it.
const bareKey = "zzSECRETRALLYKEY0123456789999"

// PartialKeyEcho: a server that echoes part of a key with no well-known
// shape, in its error body and a header, leaks none of it: the clients
// redact with internal/redact.
func (c *Client) PartialKeyEcho(t *testing.T) {
	echo := bareKey[:14] + "***" + bareKey[len(bareKey)-3:] // zzSECRETRALLYK***999
	s := NewServer(t, c.Wire.Fail(401, `{"error":{"message":"Incorrect API key provided: `+echo+`","type":"invalid_request_error"}}`,
		"X-Echo", "key="+bareKey[4:20]))
	_, err := c.New(llm.ClientOptions{BaseURL: s.URL, APIKey: bareKey}).Stream(t.Context(), Ask(c.Model, "?"))
	e, ok := llm.AsAPIError(err)
	if !ok {
		t.Fatalf("error %v", err)
	}
	texts := map[string]string{"Error()": err.Error(), "Body": e.Body, "Message": e.Message}
	for k, v := range e.Header {
		texts["header "+k] = strings.Join(v, " ")
	}
	for where, s := range texts {
		for i := 0; i+8 <= len(bareKey); i++ {
			if strings.Contains(s, bareKey[i:i+8]) {
				t.Errorf("%s holds %q of the key: %q", where, bareKey[i:i+8], s)
				break
			}
		}
	}
	if !strings.Contains(e.Message, "Incorrect API key provided: [redacted]") || e.Header.Get("X-Echo") != "key=[redacted]" {
		t.Errorf("message %q, header %q", e.Message, e.Header.Get("X-Echo"))
	}
	if s.Last().Header.Get("Authorization")+s.Last().Header.Get("X-Api-Key")+s.Last().Header.Get("X-Goog-Api-Key") == "" {
		t.Error("the key was not sent")
	}
}
