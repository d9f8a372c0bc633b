package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// chunk is the part of a chat.completion.chunk the parser reads; every
// other field (id, model, obfuscation, x_groq, timings, …) is skipped.
type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"`
	// Reasoning arrives under one of three names, by server: llama.cpp,
	// vLLM, DeepSeek and z.ai say reasoning_content; OpenRouter says
	// reasoning and repeats it in reasoning_details.
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"`
	ReasoningDetails []reasoningDetail `json:"reasoning_details"`
	ToolCalls        []toolDelta       `json:"tool_calls"`
}

type reasoningDetail struct {
	Text    string `json:"text"`
	Summary string `json:"summary"`
}

type toolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// DeepSeek and Moonshot report cache hits in fields of their own.
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
	CachedTokens         int `json:"cached_tokens"`
}

// Builder keys of the blocks a chat stream has at most one of.
const (
	keyText  = "text"
	keyThink = "think"
)

// call is a tool call seen in the stream.
type call struct {
	index int // the server's index, -1 if it sent none
	id    string
	key   string
}

// chatParser turns a Chat Completions event stream into Builder calls, one
// SSE event per fill.
//
// A stream is complete at "data: [DONE]". Servers that omit [DONE] (some
// Ollama and proxy versions) still end with a finish_reason, and the usage
// chunk may come after it, so a finish_reason is remembered rather than
// acted on: the message finishes at [DONE], or when the body ends or
// breaks after a finish_reason was seen (the answer is whole by the
// server's own word; only the usage may be missing, and retrying would
// throw a complete answer away). A body that ends with neither is
// truncated. A cancelled context always aborts.
type chatParser struct {
	*httpcall.Call
	model    *llm.Model
	dec      *sse.Decoder
	finish   string // last finish_reason seen, "" if none
	thinking bool   // the thinking block is open
	calls    []call
	// seam, after a continuation, holds back its first text until any
	// words it repeats from the partial answer are cut (continue.go).
	seam *seam
	// c is every chunk's decoding, reused, and chunks its decoder, which
	// keeps the scratch of its text views (jsonscan.ViewAt) and the bytes
	// the chunks repeat: a text delta allocates nothing here.
	c      chunk
	chunks chunkDecoder
}

func (p *chatParser) fill(b *llm.Builder) error {
	ev, err := p.dec.Next()
	if err != nil {
		return p.end(b, err)
	}
	data := bytes.TrimSpace(ev.Data)
	if ev.Name == "error" {
		return p.StreamError(data) // a proxy's "event: error"
	}
	if len(data) == 0 {
		return nil
	}
	if string(data) == "[DONE]" {
		p.complete(b)
		return nil
	}
	c := &p.c
	*c = chunk{Choices: c.Choices[:0]}
	if !p.chunks.decode(data, c) {
		*c = chunk{}
		if err := json.Unmarshal(data, c); err != nil {
			return p.DecodeError("chunk", err, data)
		}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		// OpenRouter and OpenAI report a failure inside the 200 stream as a
		// chunk with an "error" object, sometimes next to choices whose
		// finish_reason is "error".
		return p.StreamError(data)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // rally asks for one choice; ignore any others
		}
		p.delta(b, &ch.Delta)
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			p.finish = *ch.FinishReason
			if err := p.failure(); err != nil {
				return err
			}
		}
	}
	if u := c.Usage; u != nil {
		cached := u.PromptCacheHitTokens + u.CachedTokens
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
			cached = d.CachedTokens
		}
		b.Usage(usage(p.model, u.PromptTokens, cached, u.CompletionTokens, u.TotalTokens))
	}
	return nil
}

func (p *chatParser) delta(b *llm.Builder, d *delta) {
	r := d.ReasoningContent
	if r == "" {
		r = d.Reasoning
	}
	if r == "" {
		for _, x := range d.ReasoningDetails {
			r += x.Text + x.Summary
		}
	}
	if r != "" {
		b.Thinking(keyThink, r)
		p.thinking = true
	}
	if d.Content != "" || d.Refusal != "" {
		p.endThinking(b)
		// A refusal is the model's visible answer, so it reads as text.
		if text := p.seam.take(d.Content + d.Refusal); text != "" {
			b.Text(keyText, text)
		}
	}
	for i := range d.ToolCalls {
		p.endThinking(b)
		t := &d.ToolCalls[i]
		b.ToolCall(p.callKey(t), t.ID, t.Function.Name, t.Function.Arguments)
	}
}

func (p *chatParser) endThinking(b *llm.Builder) {
	if p.thinking {
		b.End(keyThink)
		p.thinking = false
	}
}

// callKey finds the call a tool-call delta belongs to. Pieces are keyed by
// index, with the id and name on the first; a new id at a known index
// (servers that number every call 0) or a piece without an index but with
// a new id starts a new call, and a piece with neither continues the last.
func (p *chatParser) callKey(t *toolDelta) string {
	idx := -1
	if t.Index != nil {
		idx = *t.Index
	}
	var found *call
	for i := len(p.calls) - 1; i >= 0; i-- {
		if c := &p.calls[i]; idx < 0 || c.index == idx {
			found = c
			break
		}
	}
	if found != nil && (t.ID == "" || found.id == "" || found.id == t.ID) {
		if found.id == "" {
			found.id = t.ID
		}
		return found.key
	}
	p.calls = append(p.calls, call{index: idx, id: t.ID, key: "call" + strconv.Itoa(len(p.calls))})
	return p.calls[len(p.calls)-1].key
}

// failure is the error a finish reason stands for, if any.
func (p *chatParser) failure() error {
	switch p.finish {
	case "content_filter":
		return &llm.APIError{Provider: p.Provider, Type: "content_filter", Code: "content_filter",
			Message: "the response was stopped by the provider's content filter", MidStream: true}
	case "error":
		// OpenRouter: the upstream provider failed mid-answer.
		return &llm.APIError{Provider: p.Provider, Message: "the upstream provider failed mid-stream (finish_reason: error)", MidStream: true}
	}
	return nil
}

// end handles the end of the body: a clean end or a read error.
func (p *chatParser) end(b *llm.Builder, err error) error {
	if errors.Is(err, context.Canceled) {
		return p.ReadError(err)
	}
	if p.finish != "" {
		p.complete(b)
		return nil
	}
	if err == io.EOF {
		return io.EOF // no finish_reason, no [DONE]: truncated
	}
	return p.ReadError(err)
}

// complete finishes the message with the finish reason seen.
func (p *chatParser) complete(b *llm.Builder) {
	if text := p.seam.flush(); text != "" {
		b.Text(keyText, text)
	}
	// A call must have an id for its result to refer to; a few servers
	// send none.
	m := b.Message()
	for i := range m.Content {
		if c := &m.Content[i]; c.Type == llm.ToolCallType && c.ID == "" {
			c.ID = "call_" + strconv.Itoa(i)
		}
	}
	b.Finish(stopReason(p.finish))
}

// stopReason maps a finish_reason. Unknown reasons are read as a normal
// stop (the Builder turns it into ToolUse when there are tool calls);
// content_filter and error never get here, they are failures.
func stopReason(r string) llm.StopReason {
	switch r {
	case "length", "max_tokens", "max_output_tokens":
		return llm.Length
	case "tool_calls", "function_call", "tool_use":
		return llm.ToolUse
	}
	return llm.Stop
}
