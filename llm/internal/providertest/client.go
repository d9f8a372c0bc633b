package providertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Client is what the shared tests need to know of a client under test. Its
// methods are whole tests: a client's test file calls each from a Test
// function of the same name.
type Client struct {
	// Name is the client's default provider name, which starts its
	// errors ("anthropic", "google").
	Name string
	// New makes the client of o, whose BaseURL is a fake server's URL
	// (the client adds the API version its base URLs need).
	New func(o llm.ClientOptions) llm.Provider
	// Key is the client's test key, which the tests expect to be
	// redacted.
	Key string
	// Model is the model the tests ask.
	Model llm.Model
	// Wire is how the API answers.
	Wire Wire
	// Whole is a whole answer, in the API's own shapes, of the text pieces;
	// Partial is one that has sent them and has not ended.
	Whole, Partial func(pieces ...string) string
	// API and Provider are what the client's messages say.
	API, Provider string
}

// Ask is a first attempt at a request of one user message.
func Ask(m llm.Model, text string) *llm.Request {
	return &llm.Request{Model: m, Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(text)}}}, Attempt: 1}
}

func (c *Client) client(url string) llm.Provider { return c.with(url, 5*time.Second, 5*time.Second) }

// with is the client for url with the request and idle timeouts given.
func (c *Client) with(url string, timeout, idle time.Duration) llm.Provider {
	return c.New(llm.ClientOptions{BaseURL: url, APIKey: c.Key, Timeout: timeout, IdleTimeout: idle})
}

// Reply streams one call from a server that answers with body, and returns
// what Run does.
func (c *Client) Reply(t *testing.T, body string) (*llm.Message, error, []llm.EventType) {
	t.Helper()
	return Run(t, c.client(NewServer(t, c.Wire.Stream(body)).URL), Ask(c.Model, "?"))
}

// Text: a whole answer in three pieces streams as its events, in order,
// into a message of the client's API, provider and model. It returns the
// message for the client's own checks of usage and cost.
func (c *Client) Text(t *testing.T) *llm.Message {
	m, err, types := c.Reply(t, c.Whole("Hello", " there", "!"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.EventType{llm.EventStart, llm.EventTextStart, llm.EventTextDelta, llm.EventTextDelta, llm.EventTextDelta, llm.EventTextEnd, llm.EventDone}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if m.TextOf() != "Hello there!" || m.StopReason != llm.Stop || len(m.Content) != 1 {
		t.Errorf("content %+v stop %q", m.Content, m.StopReason)
	}
	if m.Role != llm.Assistant || m.API != c.API || m.Provider != c.Provider || m.Model != c.Model.ID || m.Timestamp == 0 {
		t.Errorf("message header: %+v", m)
	}
	if m.Usage == nil {
		t.Fatal("no usage")
	}
	return m
}

// Malformed is a response body that must fail the stream.
type Malformed struct {
	Name, Body string
	// Truncated marks a body cut short: it fails as llm.ErrTruncated,
	// transiently. Any other failure is the client's own error.
	Truncated bool
}

// Malformed checks how each body fails; the client's own errors start
// with prefix.
func (c *Client) Malformed(t *testing.T, prefix string, bodies []Malformed) {
	for _, tt := range bodies {
		t.Run(tt.Name, func(t *testing.T) {
			m, err, _ := c.Reply(t, tt.Body)
			if m.StopReason != llm.Error || err == nil {
				t.Fatalf("stop %q err %v", m.StopReason, err)
			}
			if got := errors.Is(err, llm.ErrTruncated); got != tt.Truncated {
				t.Errorf("truncated = %v, want %v (%v)", got, tt.Truncated, err)
			}
			if tt.Truncated && llm.Classify(err).Class != retry.Transient {
				t.Errorf("truncated stream classified %v", llm.Classify(err))
			}
			if !tt.Truncated && !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q lacks the prefix %q", err, prefix)
			}
		})
	}
}
