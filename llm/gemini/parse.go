package gemini

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// chunk is one streamed GenerateContentResponse, decoded into only the
// fields rally reads.
type chunk struct {
	Candidates     []candidate `json:"candidates"`
	UsageMetadata  usage       `json:"usageMetadata"`
	PromptFeedback struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	// Error is set when the API reports a failure inside the 200 stream.
	Error json.RawMessage `json:"error"`
}

type candidate struct {
	Content struct {
		Parts []streamPart `json:"parts"`
	} `json:"content"`
	FinishReason  string `json:"finishReason"`
	FinishMessage string `json:"finishMessage"`
}

// streamPart is a part of a streamed chunk (part is a request's).
type streamPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type usage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

// Builder keys of the open text and thinking blocks. A block ends when a
// part of another kind arrives, so blocks appear in the order Gemini sent
// them; a key used again after its block ended starts a new block.
const (
	textKey     = "text"
	thinkingKey = "thinking"
)

// parser turns the chunks into Builder calls, one chunk per fill. Gemini
// has no terminal event: a chunk with a finishReason ends the answer.
type parser struct {
	dec   *sse.Decoder
	model *llm.Model
	wire  *httpcall.Call // the request's settings and error wording
	nonce string         // makes up call ids unique across answers

	json  httpcall.JSONDecoder
	ch    chunk
	open  string // key of the open text or thinking block
	calls int
}

// nonce returns a short random string for the ids of this answer's calls.
func nonce() string { return strings.ToLower(rand.Text()[:8]) }

func (p *parser) fill(b *llm.Builder) error {
	ev, err := p.dec.Next()
	if err == io.EOF {
		return io.EOF // no finishReason yet: llm.Stream reports a truncated stream
	}
	if err != nil {
		return p.wire.ReadError(err)
	}
	if len(ev.Data) == 0 {
		return nil
	}
	p.ch = chunk{}
	if !fastChunk(ev.Data, &p.ch) {
		p.ch = chunk{}
		err = p.json.Decode(ev.Data, &p.ch)
	}
	if err != nil {
		return p.wire.Malformed(p.dec, "chunk", err, ev.Data)
	}
	if len(p.ch.Error) > 0 && string(p.ch.Error) != "null" {
		b.Fail(p.wire.StreamError(ev.Data))
		return nil
	}
	if len(p.ch.Candidates) > 0 {
		p.parts(b, p.ch.Candidates[0].Content.Parts)
	}
	p.report(b)
	if r := p.ch.PromptFeedback.BlockReason; r != "" {
		b.Fail(p.wire.Errorf("the prompt was blocked (block reason %s)%s", r, p.suffix(p.ch.PromptFeedback.BlockReasonMessage)))
		return nil
	}
	if len(p.ch.Candidates) > 0 && p.ch.Candidates[0].FinishReason != "" {
		p.finish(b, &p.ch.Candidates[0])
	}
	return nil
}

func (p *parser) parts(b *llm.Builder, parts []streamPart) {
	for i := range parts {
		pt := &parts[i]
		switch {
		case pt.FunctionCall != nil:
			p.call(b, pt)
		case pt.Thought && (pt.Text != "" || pt.ThoughtSignature != ""):
			p.switchTo(b, thinkingKey)
			b.Thinking(thinkingKey, pt.Text)
			if pt.ThoughtSignature != "" {
				b.Signature(thinkingKey, pt.ThoughtSignature)
			}
		case pt.Text != "" && !pt.Thought:
			// A signature on a text part is dropped: Gemini only requires
			// those of function calls back.
			p.switchTo(b, textKey)
			b.Text(textKey, pt.Text)
		}
	}
}

func (p *parser) switchTo(b *llm.Builder, key string) {
	if p.open != key && p.open != "" {
		b.End(p.open)
	}
	p.open = key
}

// call adds a function call. Gemini sends each one whole, so it starts and
// ends at once. Gemini 3 gives calls an id; for older models one is made
// up, unique to this answer.
func (p *parser) call(b *llm.Builder, pt *streamPart) {
	p.switchTo(b, "")
	n := strconv.Itoa(p.calls)
	p.calls++
	fc := pt.FunctionCall
	id := fc.ID
	if id == "" {
		id = syntheticPrefix + p.nonce + "_" + n
	}
	key := "call" + n
	b.ToolCall(key, id, fc.Name, "")
	if pt.ThoughtSignature != "" {
		m := b.Message()
		m.Content[len(m.Content)-1].ThoughtSignature = pt.ThoughtSignature
	}
	args := fc.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	b.SetToolArgs(key, args)
	b.End(key)
}

// report records the usage of the chunk, if it has counts: every chunk
// carries the totals so far, so the last one is final. Gemini counts
// cached tokens inside the prompt, and thinking apart from the answer;
// rally's Input excludes the cache and its Output includes thinking.
func (p *parser) report(b *llm.Builder) {
	u := p.ch.UsageMetadata
	if u.PromptTokenCount == 0 && u.CandidatesTokenCount == 0 && u.ThoughtsTokenCount == 0 && u.TotalTokenCount == 0 {
		return // none, or only Vertex's {"trafficType": …}
	}
	r := llm.Usage{
		Input:     max(u.PromptTokenCount-u.CachedContentTokenCount, 0) + u.ToolUsePromptTokenCount,
		Output:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheRead: u.CachedContentTokenCount,
	}
	p.model.Price(&r)
	b.Usage(r)
}

// refusals describe the finish reasons that end an answer as a failure.
var refusals = map[string]string{
	"SAFETY":                  "the answer was blocked by safety filters",
	"RECITATION":              "the answer was blocked for reciting training data",
	"PROHIBITED_CONTENT":      "the answer was blocked for prohibited content",
	"BLOCKLIST":               "the answer was blocked by a term blocklist",
	"SPII":                    "the answer was blocked for sensitive personal information",
	"IMAGE_SAFETY":            "the answer was blocked by image safety filters",
	"MALFORMED_FUNCTION_CALL": "the model produced a malformed function call",
	"UNEXPECTED_TOOL_CALL":    "the model called a tool that is not available",
	"TOO_MANY_TOOL_CALLS":     "the model made too many tool calls",
	"LANGUAGE":                "the answer was in an unsupported language",
	"OTHER":                   "the model stopped for an unstated reason",
}

func (p *parser) finish(b *llm.Builder, c *candidate) {
	switch r := c.FinishReason; r {
	case "STOP":
		b.Finish(llm.Stop) // the Builder makes it ToolUse when calls were made
	case "MAX_TOKENS":
		b.Finish(llm.Length)
	default:
		what, ok := refusals[r]
		if !ok {
			what = "the model stopped abnormally"
		}
		b.Fail(p.wire.Errorf("%s (finish reason %s)%s", what, r, p.suffix(c.FinishMessage)))
	}
}

// suffix appends the API's own explanation, if any, redacted like every
// text that comes back from the provider.
func (p *parser) suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + p.wire.Redact(msg)
}
