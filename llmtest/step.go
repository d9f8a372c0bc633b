package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fault says what goes wrong with a step's reply, if anything.
type Fault string

const (
	// NoFault streams the reply to its end.
	NoFault Fault = ""
	// HTTPError answers with an error status and a provider-shaped body.
	HTTPError Fault = "http"
	// Reset resets the TCP connection before any response header.
	Reset Fault = "reset"
	// Drop closes the connection after After chunks, without the terminal
	// event, so the client sees a truncated stream.
	Drop Fault = "drop"
	// Stall sends nothing more after After chunks until the client goes
	// away (or the Server is closed).
	Stall Fault = "stall"
	// ErrorEvent sends the provider's in-stream error after After chunks,
	// inside the 200 response.
	ErrorEvent Fault = "event"
	// Pass forwards the request to the Server's Upstream. Without an
	// Upstream it is served as a plain reply.
	Pass Fault = "pass"
)

// ErrorKind names a built-in error, written in each provider's own shape.
type ErrorKind string

const (
	Overloaded  ErrorKind = "overloaded"   // 529 (Anthropic) / 503
	RateLimited ErrorKind = "rate_limited" // 429, per-minute, with a 1 s hint
	UsageLimit  ErrorKind = "usage_limit"  // 429, per-day or plan cap, resets in 5 min
	Overflow    ErrorKind = "overflow"     // 400, the context does not fit
	Auth        ErrorKind = "auth"         // 401 (Gemini: 400 API_KEY_INVALID)
	BadRequest  ErrorKind = "bad_request"  // 400
	NotFound    ErrorKind = "not_found"    // 404, unknown model
	ServerError ErrorKind = "server_error" // 500
)

// ErrorKinds lists the built-in errors.
func ErrorKinds() []ErrorKind {
	return []ErrorKind{Overloaded, RateLimited, UsageLimit, Overflow, Auth, BadRequest, NotFound, ServerError}
}

// Step scripts the answer to one request. The zero Step is a plain text
// reply of DefaultText.
type Step struct {
	// Fault selects what goes wrong. When empty, a step with Error or an
	// error Status is an HTTPError.
	Fault Fault `json:"fault,omitempty"`

	// Text is the visible answer. With Thinking and ToolCalls all empty,
	// DefaultText is sent.
	Text string `json:"text,omitempty"`
	// Thinking is reasoning text, streamed before Text in the provider's
	// reasoning shape.
	Thinking string `json:"thinking,omitempty"`
	// ToolCalls follow the text, in order.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Chunks is how many pieces Text and Thinking are each cut into; 0
	// cuts them at words (each word with the space before it).
	Chunks int `json:"chunks,omitempty"`
	// Delay is slept before every chunk. In JSON: "25ms" or a number of
	// milliseconds.
	Delay time.Duration `json:"-"`
	// Usage is reported at the end of the stream; nil reports input ≈
	// request bytes / 4 and output = the number of chunks.
	Usage *Usage `json:"usage,omitempty"`
	// Stop is the stop reason: "stop", "length" or "toolUse", mapped to
	// each provider's word; anything else is sent verbatim. Empty means
	// "toolUse" with tool calls, else "stop".
	Stop string `json:"stop,omitempty"`

	// Error picks a built-in error body (HTTPError) or in-stream error
	// (ErrorEvent, default Overloaded).
	Error ErrorKind `json:"error,omitempty"`
	// Status overrides the HTTP status (HTTPError, or a Raw step).
	Status int `json:"status,omitempty"`
	// Header is added to the response, whatever the step does.
	Header map[string]string `json:"headers,omitempty"`
	// Body replaces the built-in error body (HTTPError) or the in-stream
	// error's JSON (ErrorEvent). In JSON it may be a string or any value.
	Body string `json:"-"`
	// After is the number of chunks sent before Drop, Stall or ErrorEvent.
	// 0 means right after the stream's opening events.
	After int `json:"after,omitempty"`
	// Repeat, for a Chat Completions request with continue_final_message
	// (continue.go), makes the continuation first say again the last
	// Repeat words of the partial answer, as models sometimes do at the
	// seam.
	Repeat int `json:"repeat,omitempty"`

	// Raw, when set, is served byte for byte as the response body,
	// whatever the request path (a replayed transcript). The content type
	// is text/event-stream, or application/json for a body that starts
	// with '{' or '['.
	Raw []byte `json:"-"`
	// RawFile is read into Raw; LoadScript resolves it against the script
	// file's folder.
	RawFile string `json:"rawFile,omitempty"`

	// ResetIn, on a usage_limit step, is when the limit lifts: the step
	// answers every request with the limit, stating the time left, until
	// ResetIn after it first answered; then the script goes on with the
	// next step. Zero states the built-in 5 minutes and answers once. In
	// JSON: "10s" or a number of milliseconds.
	ResetIn time.Duration `json:"-"`
	// resetLeft is the reset a held limit states now (Server.take).
	resetLeft time.Duration
}

// ToolCall is one function call the fake model makes.
type ToolCall struct {
	// ID is the call id; empty generates one (Gemini gets none, as 2.x).
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is a JSON object as text. In a JSON script it may be
	// written as an object or as a string.
	Arguments string `json:"-"`
	// Chunks is how many pieces the arguments are streamed in (Gemini
	// always sends them whole); 0 means 3.
	Chunks int `json:"chunks,omitempty"`
}

// Usage is the token accounting to report. Input excludes cached tokens,
// as in rally's own usage; providers that count cached tokens inside the
// prompt total (OpenAI, Gemini) get Input+CacheRead there. CacheWrite is
// only expressible in Anthropic's format.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
}

// DefaultText is the answer of a step that says nothing else.
const DefaultText = "Hello! This is a scripted reply from the llmtest fake LLM server."

type stepAlias Step

type stepWire struct {
	*stepAlias
	Delay   json.RawMessage `json:"delay,omitempty"`
	ResetIn json.RawMessage `json:"resetIn,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
	Raw     *string         `json:"raw,omitempty"`
}

// UnmarshalJSON reads the script form of a step.
func (s *Step) UnmarshalJSON(b []byte) error {
	*s = Step{}
	w := stepWire{stepAlias: (*stepAlias)(s)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if len(w.Delay) > 0 {
		d, err := parseDelay(w.Delay)
		if err != nil {
			return err
		}
		s.Delay = d
	}
	if len(w.ResetIn) > 0 {
		d, err := parseDelay(w.ResetIn)
		if err != nil {
			return fmt.Errorf("llmtest: resetIn: %w", err)
		}
		s.ResetIn = d
	}
	s.Body = rawText(w.Body)
	if w.Raw != nil {
		s.Raw = []byte(*w.Raw)
	}
	return nil
}

// MarshalJSON writes the script form of a step.
func (s Step) MarshalJSON() ([]byte, error) {
	a := stepAlias(s)
	w := stepWire{stepAlias: &a}
	if s.Delay != 0 {
		w.Delay = mustJSON(s.Delay.String())
	}
	if s.ResetIn != 0 {
		w.ResetIn = mustJSON(s.ResetIn.String())
	}
	if s.Body != "" {
		w.Body = mustJSON(s.Body)
	}
	if s.Raw != nil {
		r := string(s.Raw)
		w.Raw = &r
	}
	return json.Marshal(w)
}

type toolAlias ToolCall

type toolWire struct {
	*toolAlias
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// UnmarshalJSON accepts arguments as a JSON object or as a string.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	*c = ToolCall{}
	w := toolWire{toolAlias: (*toolAlias)(c)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.Arguments = rawText(w.Arguments)
	return nil
}

// MarshalJSON writes arguments as a JSON value when they are one.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	a := toolAlias(c)
	w := toolWire{toolAlias: &a}
	if c.Arguments != "" {
		w.Arguments = json.RawMessage(c.Arguments)
		if !json.Valid(w.Arguments) {
			w.Arguments = mustJSON(c.Arguments)
		}
	}
	return json.Marshal(w)
}

// rawText turns a JSON string into its text and any other value into its
// compact JSON.
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func parseDelay(raw json.RawMessage) (time.Duration, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("llmtest: delay %q: want a duration like \"25ms\"", s)
		}
		return d, nil
	}
	ms, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, fmt.Errorf("llmtest: delay %s: want a duration string or milliseconds", raw)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// fault is the step's effective fault.
func (s *Step) fault() Fault {
	if s.Fault == NoFault && s.Raw == nil && s.RawFile == "" && (s.Error != "" || s.Status >= 400) {
		return HTTPError
	}
	return s.Fault
}

// Validate reports a step that cannot be served.
func (s *Step) Validate() error {
	switch f := s.fault(); f {
	case NoFault, Reset, Drop, Stall, ErrorEvent, Pass:
	case HTTPError:
		if s.Error == "" && s.Status == 0 {
			return errors.New("llmtest: an http fault needs an error kind or a status")
		}
	default:
		return fmt.Errorf("llmtest: unknown fault %q (want http, reset, drop, stall, event or pass)", f)
	}
	if s.Error != "" && !knownKind(s.Error) {
		return fmt.Errorf("llmtest: unknown error kind %q (want one of %s)", s.Error, kindList())
	}
	if s.ResetIn < 0 || s.ResetIn > 0 && (s.Error != UsageLimit || s.fault() != HTTPError) {
		return fmt.Errorf("llmtest: resetIn %v: only a positive reset of an http usage_limit step", s.ResetIn)
	}
	if s.Status != 0 && (s.Status < 100 || s.Status > 599) {
		return fmt.Errorf("llmtest: status %d out of range", s.Status)
	}
	if s.After < 0 || s.Chunks < 0 || s.Delay < 0 || s.Repeat < 0 {
		return errors.New("llmtest: after, chunks, delay and repeat must not be negative")
	}
	for i, c := range s.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("llmtest: tool call %d has no name", i)
		}
		if c.Chunks < 0 {
			return fmt.Errorf("llmtest: tool call %d: chunks must not be negative", i)
		}
		if c.Arguments != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(c.Arguments), &m); err != nil {
				return fmt.Errorf("llmtest: tool call %d (%s): arguments must be a JSON object: %v", i, c.Name, err)
			}
		}
	}
	return nil
}

func knownKind(k ErrorKind) bool {
	for _, x := range ErrorKinds() {
		if x == k {
			return true
		}
	}
	return false
}

func kindList() string {
	var b strings.Builder
	for i, k := range ErrorKinds() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

// LoadScript reads a JSON script: an array of steps. A step's rawFile is
// read relative to the script's folder.
func LoadScript(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	var steps []Step
	if err := json.Unmarshal(data, &steps); err != nil {
		return nil, fmt.Errorf("llmtest: script %s: %s", path, strings.TrimPrefix(err.Error(), "llmtest: "))
	}
	for i := range steps {
		st := &steps[i]
		if st.RawFile != "" && st.Raw == nil {
			p := st.RawFile
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(path), p)
			}
			if st.Raw, err = os.ReadFile(p); err != nil {
				return nil, fmt.Errorf("llmtest: script %s step %d: %w", path, i+1, err)
			}
		}
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("llmtest: script %s step %d: %s", path, i+1, strings.TrimPrefix(err.Error(), "llmtest: "))
		}
	}
	return steps, nil
}

// split cuts text into n pieces of near-equal length in runes, or, for n
// == 0, into words each carrying the white space before it (leading white
// space goes with the first word, trailing with the last).
func split(text string, n int) []string {
	if text == "" {
		return nil
	}
	if n > 0 {
		return splitN(text, n)
	}
	var out []string
	start, inWord := 0, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && inWord {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	out = append(out, text[start:])
	if n := len(out); n > 1 && strings.TrimSpace(out[n-1]) == "" {
		// Trailing white space belongs to the last word.
		out[n-2] += out[n-1]
		out = out[:n-1]
	}
	return out
}

func splitN(text string, n int) []string {
	runes := utf8.RuneCountInString(text)
	if n > runes {
		n = runes
	}
	out := make([]string, 0, n)
	i, done := 0, 0
	for k := 1; k <= n; k++ {
		end := runes * k / n
		j := i
		for ; done < end; done++ {
			_, size := utf8.DecodeRuneInString(text[j:])
			j += size
		}
		out = append(out, text[i:j])
		i = j
	}
	return out
}
