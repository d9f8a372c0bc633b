package wire

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// updateWire is a message_update line. Its stream event is read without
// its partial: the wire repeats the message there, so decoding it twice
// would only cost time and memory.
type updateWire struct {
	Message   *llm.Message `json:"message"`
	Assistant *streamWire  `json:"assistantMessageEvent"`
}

type streamWire struct {
	Type         llm.EventType  `json:"type"`
	ContentIndex int            `json:"contentIndex"`
	Delta        string         `json:"delta"`
	Content      string         `json:"content"`
	ToolCall     *llm.Content   `json:"toolCall"`
	Reason       llm.StopReason `json:"reason"`
}

// Unknown is a line whose "type" no session event has (a response, or a
// kind of a newer rally): DecodeEvent hands it over whole rather than
// failing, so a reader can pass it on; AppendEvent writes Line back.
type Unknown struct {
	Type session.EventType
	Line json.RawMessage
}

// Kind is the line's "type".
func (u Unknown) Kind() session.EventType { return u.Type }

// DecodeEvent reads one event line in its wire shape, as a client of the
// RPC or JSON output sees it, into the kind's struct (through its JSON
// tags). A message_update's partial is its message (one value, not a
// second copy).
func DecodeEvent(b []byte) (session.Event, error) {
	var head struct {
		Type session.EventType `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("wire: decode event: %w", err)
	}
	if head.Type == session.MessageUpdate {
		var w updateWire
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("wire: decode %s: %w", head.Type, err)
		}
		e := session.MessageUpdateEvent{Message: w.Message}
		if a := w.Assistant; a != nil {
			e.Assistant = &llm.Event{Type: a.Type, ContentIndex: a.ContentIndex, Delta: a.Delta, Content: a.Content,
				ToolCall: a.ToolCall, Reason: a.Reason, Partial: w.Message}
		}
		return e, nil
	}
	zero, ok := session.ZeroEvent(head.Type)
	if !ok {
		return Unknown{Type: head.Type, Line: append(json.RawMessage(nil), b...)}, nil
	}
	p := reflect.New(reflect.TypeOf(zero))
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return nil, fmt.Errorf("wire: decode %s: %w", head.Type, err)
	}
	return p.Elem().Interface().(session.Event), nil
}
