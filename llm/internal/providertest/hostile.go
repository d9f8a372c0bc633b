package providertest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// What every client does with a server that will not stop: a stream past
// the model's maxTokens or past MaxMessageBytes fails, fatally, saying so,
// and a compressed body is never inflated.

// MessageTooLarge: a stream of 4 KB deltas far past the caps fails with
// llm.ErrMessageTooLarge, classified fatal, holding less than the cap.
func (c *Client) MessageTooLarge(t *testing.T) {
	pieces := make([]string, 512) // 2 MiB of text
	for i := range pieces {
		pieces[i] = strings.Repeat("y", 4096)
	}
	s := NewServer(t, c.Wire.Stream(c.Whole(pieces...)))
	tests := []struct {
		name      string
		maxTokens int // of the model
		maxBytes  int // of the client
		want      string
	}{
		{"past the model's maxTokens", 1000, 0, "maxTokens of 1000"},
		{"past maxMessageBytes", 0, 256 << 10, "bytes in one response (maxMessageBytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := c.Model
			m.MaxTokens = tt.maxTokens
			o := llm.ClientOptions{BaseURL: s.URL, APIKey: c.Key, MaxMessageBytes: tt.maxBytes}
			msg, err, _ := Run(t, c.New(o), Ask(m, "?"))
			if msg.StopReason != llm.Error || !errors.Is(err, llm.ErrMessageTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("stop %q, err %v; want ErrMessageTooLarge naming %q", msg.StopReason, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), c.Name+": ") {
				t.Errorf("error %q does not start with the provider", err)
			}
			if v := llm.Classify(err); v.Class != retry.Fatal {
				t.Errorf("classified %v (%s), want fatal", v.Class, v.Reason)
			}
			if n := len(msg.TextOf()); n > 1<<20 {
				t.Errorf("the message holds %d bytes of the 2 MiB stream", n)
			}
		})
	}
	t.Run("under the caps", func(t *testing.T) {
		m := c.Model
		m.MaxTokens = 1 << 20
		msg, err, _ := Run(t, c.New(llm.ClientOptions{BaseURL: s.URL, APIKey: c.Key}), Ask(m, "?"))
		if err != nil || len(msg.TextOf()) != 512*4096 {
			t.Errorf("%d bytes, err %v", len(msg.TextOf()), err)
		}
	})
}

// NoGzip: a client asks for an uncompressed body, and a server that
// gzips anyway is not inflated (a small body could inflate to gigabytes):
// the stream fails instead of answering.
func (c *Client) NoGzip(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(c.Whole("inflated")))
	zw.Close()
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", c.Wire.StreamType)
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	})
	msg, err, _ := Run(t, c.client(s.URL), Ask(c.Model, "?"))
	if got := s.Last().Header.Get("Accept-Encoding"); got != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", got)
	}
	if err == nil || strings.Contains(msg.TextOf(), "inflated") {
		t.Errorf("text %q, err %v: the gzip body was inflated", msg.TextOf(), err)
	}
}
