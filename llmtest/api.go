package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
)

// API is a wire format, named as in rally's settings (providers.<name>.api).
type API string

const (
	// OpenAICompletions is POST …/chat/completions.
	OpenAICompletions API = llm.APIOpenAICompletions
	// OpenAIResponses is POST …/responses.
	OpenAIResponses API = llm.APIOpenAIResponses
	// AnthropicMessages is POST …/messages.
	AnthropicMessages API = llm.APIAnthropicMessages
	// GoogleGenerativeAI is POST …/models/{model}:streamGenerateContent
	// (or :generateContent, not streamed).
	GoogleGenerativeAI API = llm.APIGoogle
)

// formats is every wire format the Server speaks, in one table: the path
// endings that ask for it and its writer. A new format is one row and its
// writer (package llm/apis's test checks that every API rally has a
// client for is served here).
var formats = []struct {
	api    API
	suffix []string
	w      wire
}{
	{OpenAICompletions, []string{"/chat/completions"}, chatWire{}},
	{OpenAIResponses, []string{"/responses"}, responsesWire{}},
	{AnthropicMessages, []string{"/messages"}, anthropicWire{}},
	{GoogleGenerativeAI, []string{":streamGenerateContent", ":generateContent"}, geminiWire{}},
}

// DefaultModel is the model a reply names when the request names none,
// and the one GET …/models lists unless Server.Models says otherwise.
const DefaultModel = "llmtest-model"

// APIs lists the formats the Server speaks.
func APIs() []API {
	out := make([]API, len(formats))
	for i, f := range formats {
		out[i] = f.api
	}
	return out
}

// APIOf tells the wire format from a request path, under any prefix
// ("/v1/chat/completions", "/openai/chat/completions", "/v1beta/models/
// gemini-2.5-flash:streamGenerateContent", "…:generateContent"). It
// returns "" for other paths.
func APIOf(path string) API {
	for _, f := range formats {
		for _, s := range f.suffix {
			if strings.HasSuffix(path, s) {
				return f.api
			}
		}
	}
	return ""
}

// frame is one server-sent event, bytes as they go on the wire.
type frame struct {
	b []byte
	// delta marks a content piece (text, thinking or tool arguments),
	// which is what Step.After counts.
	delta bool
	// seq is a Responses event's sequence_number (background.go).
	seq int
}

// wire writes one API's streams and errors.
type wire interface {
	// reply is a whole successful stream, terminal events included.
	reply(r *reply) []frame
	// failure is the in-stream error, after sent frames were written.
	failure(r *reply, e errSpec, body string, sent int) []frame
	// errorBody renders an HTTP error body.
	errorBody(e errSpec, r *reply) []byte
	// header is set on every response.
	header(h http.Header, r *reply, stream bool)
	// whole is the answer of a request that asked for no stream: one
	// JSON body holding what reply streams.
	whole(r *reply) []byte
	// apiError is the provider's own error for kind (errors.go); cred is
	// the redacted credential, for an auth error that echoes it.
	apiError(kind ErrorKind, r *reply, cred string) errSpec
	// malformed is the provider's 400 for a body that is not a JSON
	// object, why says what is wrong with it.
	malformed(why error) errSpec
}

func (a API) wire() wire {
	for _, f := range formats {
		if f.api == a {
			return f.w
		}
	}
	return nil
}

// reply is what one answer says, whatever the wire format.
type reply struct {
	seq          int // the request's Seq, for ids
	model        string
	now          time.Time
	thinking     []string
	text         []string
	tools        []tool
	usage        Usage
	stop         string // "stop", "length", "toolUse", or a native value
	includeUsage bool   // Chat Completions: stream_options.include_usage
	stream       bool   // the client asked for a stream
	// reset is when a usage limit says it resets (Step.ResetIn).
	reset time.Duration
}

type tool struct {
	id, name, args string
	pieces         []string
}

// info is what the recorder and the writers read from a request body.
type info struct {
	model        string
	messages     int
	includeUsage bool
	// stream is what the client asked for: "stream": true in the body
	// (absent means false, as at the providers), or Gemini's
	// :streamGenerateContent path.
	stream bool
}

func readInfo(api API, path string, body []byte) info {
	var b struct {
		Model         string            `json:"model"`
		Messages      []json.RawMessage `json:"messages"`
		Contents      []json.RawMessage `json:"contents"`
		Input         json.RawMessage   `json:"input"`
		Stream        bool              `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &b) // a body we cannot read still gets an answer
	in := info{model: b.Model, includeUsage: b.StreamOptions.IncludeUsage, stream: b.Stream}
	switch api {
	case OpenAIResponses:
		var items []json.RawMessage
		if json.Unmarshal(b.Input, &items) == nil {
			in.messages = len(items)
		} else if len(b.Input) > 0 && b.Input[0] == '"' {
			in.messages = 1
		}
	case GoogleGenerativeAI:
		in.messages = len(b.Contents)
		in.stream = strings.HasSuffix(path, ":streamGenerateContent")
		if i := strings.LastIndex(path, "/models/"); i >= 0 {
			m := path[i+len("/models/"):]
			in.model, _, _ = strings.Cut(m, ":")
		}
	default:
		in.messages = len(b.Messages)
	}
	return in
}

// newReply lays out a step's answer for the writers.
func newReply(st *Step, seq int, in info, bodyLen int, now time.Time) *reply {
	r := &reply{seq: seq, model: in.model, now: now, includeUsage: in.includeUsage, stream: in.stream, reset: usageReset}
	if st.resetLeft > 0 {
		r.reset = st.resetLeft
	}
	if r.model == "" {
		r.model = DefaultModel
	}
	text := st.Text
	if !st.says() {
		text = DefaultText
	}
	r.thinking = split(st.Thinking, st.Chunks)
	r.text = split(text, st.Chunks)
	for _, c := range st.ToolCalls {
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		n := c.Chunks
		if n == 0 {
			n = 3
		}
		t := tool{id: c.ID, name: c.Name, args: args, pieces: splitN(args, n)}
		r.tools = append(r.tools, t)
	}
	if st.Usage != nil {
		r.usage = *st.Usage
	} else {
		r.usage = Usage{Input: max(1, bodyLen/4), Output: r.pieces()}
	}
	r.stop = st.Stop
	if r.stop == "" {
		r.stop = "stop"
		if len(r.tools) > 0 {
			r.stop = "toolUse"
		}
	}
	return r
}

// sse frames an event the way OpenAI and Anthropic do: an optional event
// line, one data line, a blank line.
func sse(event string, data any, delta bool) frame {
	var b []byte
	if event != "" {
		b = append(b, "event: "+event+"\n"...)
	}
	b = append(b, "data: "...)
	switch d := data.(type) {
	case string:
		b = append(b, d...)
	default:
		b = append(b, mustJSON(d)...)
	}
	b = append(b, "\n\n"...)
	return frame{b: b, delta: delta}
}

func (r *reply) fullText() string { return strings.Join(r.text, "") }
func (r *reply) thought() string  { return strings.Join(r.thinking, "") }

// pieces counts the chunks a stream of the reply carries.
func (r *reply) pieces() int {
	n := len(r.thinking) + len(r.text)
	for _, t := range r.tools {
		n += len(t.pieces)
	}
	return n
}

// id is a response id with the provider's prefix, unique per request.
func (r *reply) id(prefix string) string { return prefix + "llmtest" + itoa(r.seq) }

// toolID is the call id of tool i, generated unless the script set one.
func (r *reply) toolID(prefix string, i int) string {
	if id := r.tools[i].id; id != "" {
		return id
	}
	return prefix + "llmtest" + itoa(r.seq) + "_" + itoa(i)
}

func itoa(n int) string { return strconv.Itoa(n) }
