package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// respEvent is the part of a Responses stream event the parser reads.
type respEvent struct {
	Type         string          `json:"type"`
	ItemID       string          `json:"item_id"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     *respResponse   `json:"response"`
	// The "error" event is documented flat ({code, message}) but has been
	// seen nested ({error: {type, code, message}}); Code is read here for
	// the flat shape, the rest by httpcall.ParseError.
	Code any `json:"code"`
}

type respItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
}

type respResponse struct {
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		TotalTokens        int `json:"total_tokens"`
		InputTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// respParser turns a Responses event stream into Builder calls, one SSE
// event per fill. Blocks are keyed by output item id; a tool call's id is
// the item's call_id (what function_call_output refers to), not its item
// id. The stream is complete at response.completed, response.incomplete
// or response.failed; a body that ends before one of them is truncated.
type respParser struct {
	*httpcall.Call
	model *llm.Model
	dec   *sse.Decoder
	// streamed marks function calls whose arguments came as deltas, so the
	// whole arguments in output_item.done are not added twice.
	streamed map[string]bool
	// cursor, in background mode, follows the response id and the last
	// sequence number, where a resume starts.
	cursor *cursor
}

func (p *respParser) fill(b *llm.Builder) error {
	ev, err := p.dec.Next()
	if err == io.EOF {
		return io.EOF // the body ended before a terminal event: truncated
	}
	if err != nil {
		return p.ReadError(err)
	}
	if p.cursor != nil {
		p.cursor.see(ev.Name, ev.Data)
	}
	if ignored(ev.Name) {
		return nil // skipped undecoded: some carry the whole response object
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		if ev.Name == "error" {
			return p.StreamError(data)
		}
		return nil
	}
	var e respEvent
	fast := ev.Name == "" || strings.HasSuffix(ev.Name, ".delta")
	if !fast || !fastEvent(data, &e) {
		e = respEvent{}
		if err := json.Unmarshal(data, &e); err != nil {
			return p.DecodeError("chunk", err, data)
		}
	}
	typ := e.Type
	if typ == "" {
		typ = ev.Name
	}
	key := e.ItemID
	if key == "" {
		key = "out" + strconv.Itoa(e.OutputIndex)
	}
	switch typ {
	case "response.output_text.delta", "response.refusal.delta":
		if e.Delta != "" {
			b.Text(key, e.Delta)
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if e.Delta != "" {
			b.Thinking(key, e.Delta)
		}
	case "response.reasoning_summary_part.added":
		if e.SummaryIndex > 0 {
			b.Thinking(key, "\n\n") // summary parts are paragraphs
		}
	case "response.function_call_arguments.delta":
		if e.Delta != "" {
			if p.streamed == nil {
				p.streamed = map[string]bool{}
			}
			p.streamed[key] = true
			b.ToolCall(key, "", "", e.Delta)
		}
	case "response.output_item.added", "response.output_item.done":
		return p.item(b, typ == "response.output_item.done", e.Item, e.OutputIndex)
	case "response.completed", "response.incomplete", "response.failed":
		return p.finish(b, typ, e.Response, data)
	case "error":
		err := p.StreamError(data)
		if s, ok := e.Code.(string); ok && err.Code == "" {
			err.Code = s
		}
		return err
	}
	return nil
}

// ignored lists events with nothing the parser needs, by SSE event name.
func ignored(name string) bool {
	switch name {
	case "response.created", "response.in_progress", "response.queued",
		"response.content_part.added", "response.content_part.done",
		"response.output_text.done", "response.output_text.annotation.added",
		"response.refusal.done", "response.reasoning_summary_text.done",
		"response.reasoning_summary_part.done", "response.reasoning_text.done",
		"response.function_call_arguments.done":
		return true
	}
	return false
}

func (p *respParser) item(b *llm.Builder, done bool, raw json.RawMessage, index int) error {
	var it respItem
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &it); err != nil {
			return p.DecodeError("chunk", err, raw)
		}
	}
	key := it.ID
	if key == "" {
		key = "out" + strconv.Itoa(index)
	}
	switch it.Type {
	case "function_call":
		args := ""
		if done && !p.streamed[key] {
			// No argument deltas came (a proxy that sends items whole):
			// the done item has them all.
			args = it.Arguments
		}
		b.ToolCall(key, it.CallID, it.Name, args)
	case "reasoning":
		if done && it.EncryptedContent != "" {
			// The whole item is what goes back as input next turn.
			b.Signature(key, string(raw))
		}
	}
	if done {
		b.End(key)
	}
	return nil
}

// finish ends the message at a terminal event.
func (p *respParser) finish(b *llm.Builder, typ string, r *respResponse, data []byte) error {
	if r == nil {
		r = &respResponse{}
	}
	if u := r.Usage; u != nil {
		cached := 0
		if d := u.InputTokensDetails; d != nil {
			cached = d.CachedTokens
		}
		b.Usage(usage(p.model, u.InputTokens, cached, u.OutputTokens, u.TotalTokens))
	}
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	switch {
	case typ == "response.failed" || r.Status == "failed":
		if len(r.Error) == 0 || string(r.Error) == "null" {
			return p.StreamError(data)
		}
		// Only the error object, not the whole response, becomes the body.
		body := make([]byte, 0, len(r.Error)+10)
		body = append(append(append(body, `{"error":`...), r.Error...), '}')
		return p.StreamError(body)
	case reason == "content_filter":
		return &llm.APIError{Provider: p.Provider, Type: "content_filter", Code: "content_filter",
			Message: "the response was stopped by the provider's content filter", MidStream: true}
	case typ == "response.incomplete" || r.Status == "incomplete":
		// max_output_tokens, or a reason this parser does not know: the
		// answer was cut short either way.
		b.Finish(llm.Length)
	default:
		b.Finish(llm.Stop)
	}
	return nil
}
