package anthropic

import (
	"io"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// event is one streamed event, decoded into only the fields rally reads.
// Nested objects are values, not pointers, so that decoding into a zeroed
// event allocates nothing but the strings.
type event struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage usage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
		StopDetails struct {
			Explanation string `json:"explanation"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage usage `json:"usage"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// kind is what rally does with the content block at an index.
type kind uint8

const (
	unknown  kind = iota // no content_block_start seen
	text                 // text block
	thinking             // thinking or redacted_thinking block
	toolCall             // a client tool call (tool_use)
	skipped              // server tools and their results: not rally's to run
)

// maxBlocks bounds the block index a stream may use, so a hostile index
// cannot make the parser allocate without limit.
const maxBlocks = 1 << 12

// parser turns the event stream into Builder calls, one event per fill.
type parser struct {
	dec   *sse.Decoder
	model *llm.Model
	call  *httpcall.Call // the request's settings and error wording

	ev      event
	json    httpcall.JSONDecoder
	kinds   []kind
	usage   llm.Usage
	stop    string
	refusal string
}

func (p *parser) fill(b *llm.Builder) error {
	ev, err := p.dec.Next()
	if err == io.EOF {
		return io.EOF // no message_stop: llm.Stream reports a truncated stream
	}
	if err != nil {
		return p.call.ReadError(err)
	}
	switch ev.Name {
	case "ping":
		return nil
	case "error":
		// Whatever its data, an error event ends the stream with it.
		p.fail(b, ev.Data)
		return nil
	}
	p.ev = event{}
	if !fastDelta(ev.Data, &p.ev) {
		p.ev = event{}
		err = p.json.Decode(ev.Data, &p.ev)
	}
	if err != nil {
		return p.malformed(ev.Name, err, ev.Data)
	}
	if p.ev.Type == "error" {
		p.fail(b, ev.Data)
		return nil
	}
	return p.handle(b)
}

// fail ends the message with the error event data reports, such as
// {"type":"error","error":{"type":"overloaded_error",…}} after a 200.
func (p *parser) fail(b *llm.Builder, data []byte) {
	e := p.call.StreamError(data)
	if e.Message == "" {
		e.Message = "error event without details"
	}
	b.Fail(e)
}

// malformed reports an event that is not the JSON it should be (see
// httpcall.Call.Malformed).
func (p *parser) malformed(name string, err error, data []byte) error {
	if name == "" {
		name = "unnamed"
	}
	return p.call.Malformed(p.dec, name+" event", err, data)
}

func (p *parser) handle(b *llm.Builder) error {
	e := &p.ev
	switch e.Type {
	case "message_start":
		p.usage.Input = e.Message.Usage.InputTokens
		p.usage.Output = e.Message.Usage.OutputTokens
		p.usage.CacheRead = e.Message.Usage.CacheReadInputTokens
		p.usage.CacheWrite = e.Message.Usage.CacheCreationInputTokens
		p.report(b)
	case "content_block_start":
		return p.start(b)
	case "content_block_delta":
		return p.delta(b)
	case "content_block_stop":
		if k, err := p.kind(e.Index); err != nil {
			return err
		} else if k == text || k == thinking || k == toolCall {
			b.End(llm.Key(e.Index))
		}
	case "message_delta":
		if r := e.Delta.StopReason; r != "" {
			p.stop = r
			p.refusal = e.Delta.StopDetails.Explanation
		}
		// Counts are cumulative: the last ones are final. Older API
		// versions send only output_tokens here, so an absent (zero)
		// input count keeps message_start's.
		p.usage.Output = e.Usage.OutputTokens
		if u := e.Usage; u.InputTokens > 0 || u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
			p.usage.Input = u.InputTokens
			p.usage.CacheRead = u.CacheReadInputTokens
			p.usage.CacheWrite = u.CacheCreationInputTokens
		}
		p.report(b)
	case "message_stop":
		p.finish(b)
	}
	// ping and event types added after this client was written are
	// ignored, as the API's versioning policy asks.
	return nil
}

func (p *parser) report(b *llm.Builder) {
	u := p.usage
	u.TotalTokens = 0
	p.model.Price(&u)
	b.Usage(u)
}

// kind returns the kind of the block at index i.
func (p *parser) kind(i int) (kind, error) {
	if i < 0 || i >= maxBlocks {
		return unknown, p.call.Errorf("content block index %d out of range", i)
	}
	if i < len(p.kinds) {
		return p.kinds[i], nil
	}
	return unknown, nil
}

func (p *parser) setKind(i int, k kind) {
	for len(p.kinds) <= i {
		p.kinds = append(p.kinds, unknown)
	}
	p.kinds[i] = k
}

func (p *parser) start(b *llm.Builder) error {
	e := &p.ev
	if _, err := p.kind(e.Index); err != nil {
		return err
	}
	key, cb := llm.Key(e.Index), &e.ContentBlock
	switch cb.Type {
	case "text":
		p.setKind(e.Index, text)
		b.Text(key, cb.Text)
	case "thinking":
		p.setKind(e.Index, thinking)
		b.Thinking(key, cb.Thinking)
		if cb.Signature != "" {
			b.Signature(key, cb.Signature)
		}
	case "redacted_thinking":
		// Encrypted reasoning: no text to show, but it must go back to the
		// API as it came. It is kept as a thinking block whose signature is
		// the data (see assistantContent).
		p.setKind(e.Index, thinking)
		b.Thinking(key, "")
		b.Signature(key, cb.Data)
	case "tool_use":
		p.setKind(e.Index, toolCall)
		b.ToolCall(key, cb.ID, cb.Name, "")
	default:
		// server_tool_use, web_search_tool_result and the like: the API
		// ran them itself; they are not calls for rally's tools.
		p.setKind(e.Index, skipped)
	}
	return nil
}

func (p *parser) delta(b *llm.Builder) error {
	e := &p.ev
	k, err := p.kind(e.Index)
	if err != nil {
		return err
	}
	d := &e.Delta
	if k == unknown {
		// A delta without its block start: take the block's kind from the
		// delta rather than lose the text.
		switch d.Type {
		case "text_delta":
			k = text
		case "thinking_delta", "signature_delta":
			k = thinking
		default:
			return nil
		}
		p.setKind(e.Index, k)
	}
	key := llm.Key(e.Index)
	switch {
	case k == text && d.Type == "text_delta":
		b.Text(key, d.Text)
	case k == thinking && d.Type == "thinking_delta":
		b.Thinking(key, d.Thinking)
	case k == thinking && d.Type == "signature_delta":
		b.Signature(key, d.Signature)
	case k == toolCall && d.Type == "input_json_delta":
		b.ToolCall(key, "", "", d.PartialJSON)
	}
	// citations_delta and deltas of skipped blocks add nothing.
	return nil
}

// finish ends the message on message_stop with the mapped stop reason.
func (p *parser) finish(b *llm.Builder) {
	switch p.stop {
	case "max_tokens", "model_context_window_exceeded":
		b.Finish(llm.Length)
	case "tool_use":
		b.Finish(llm.ToolUse)
	case "refusal":
		msg := "the model refused to answer (stop_reason refusal)"
		if p.refusal != "" {
			msg += ": " + p.call.Redact(p.refusal)
		}
		b.Fail(&llm.APIError{Provider: p.call.Provider, Type: "refusal", Message: msg, MidStream: true})
	default:
		// end_turn, stop_sequence, pause_turn (a server tool paused the
		// turn; the answer so far is whole), and reasons newer than this
		// client.
		b.Finish(llm.Stop)
	}
}
