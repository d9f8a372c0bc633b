package agent

import (
	"encoding/json"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// EventType names an event. The values are the RPC wire names
// (docs/rpc.md); package session adds its own kinds to the loop's.
type EventType string

// The events of the agent loop. Retries, compaction and settling are the
// session's (package session), not the loop's.
const (
	AgentStart          EventType = "agent_start"
	AgentEnd            EventType = "agent_end"
	TurnStart           EventType = "turn_start"
	TurnEnd             EventType = "turn_end"
	MessageStart        EventType = "message_start"
	MessageUpdate       EventType = "message_update"
	MessageEnd          EventType = "message_end"
	ToolExecutionStart  EventType = "tool_execution_start"
	ToolExecutionUpdate EventType = "tool_execution_update"
	ToolExecutionEnd    EventType = "tool_execution_end"
)

// Event is one thing that happened in a run: one of the *Event structs
// below. Each struct is its kind's only definition; its JSON tags are its
// wire form (package rpc/wire adds the "type").
type Event interface{ Kind() EventType }

// AgentStartEvent opens a run.
type AgentStartEvent struct{}

// AgentEndEvent closes a run with the messages it added.
type AgentEndEvent struct {
	Messages []llm.Message `json:"messages"`
	// WillRetry says that a retry or a compaction continues the prompt, so
	// this is not its end. The loop never knows that and leaves it false;
	// the session around it sets it.
	WillRetry bool `json:"willRetry"`
}

// TurnStartEvent opens a turn: one model call and the tools it asked for.
type TurnStartEvent struct{}

// TurnEndEvent closes a turn with its assistant message and tool results.
type TurnEndEvent struct {
	Message     *llm.Message  `json:"message"`
	ToolResults []llm.Message `json:"toolResults"`
}

// MessageStartEvent opens a message (user, assistant or tool result).
type MessageStartEvent struct {
	Message *llm.Message `json:"message"`
}

// MessageUpdateEvent is one streamed delta: Assistant is the provider
// stream's event, and its Partial is Message.
type MessageUpdateEvent struct {
	Message   *llm.Message `json:"message"`
	Assistant *llm.Event   `json:"assistantMessageEvent"`
}

// MessageEndEvent closes a message; Message is complete.
type MessageEndEvent struct {
	Message *llm.Message `json:"message"`
}

// ToolExecutionStartEvent says a tool call starts running.
type ToolExecutionStartEvent struct {
	Args       json.RawMessage `json:"args"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
}

// ToolExecutionUpdateEvent is a running tool's partial result.
type ToolExecutionUpdateEvent struct {
	Args          json.RawMessage `json:"args"`
	PartialResult *tool.Result    `json:"partialResult"`
	ToolCallID    string          `json:"toolCallId"`
	ToolName      string          `json:"toolName"`
}

// ToolExecutionEndEvent says a tool call finished with Result.
type ToolExecutionEndEvent struct {
	IsError    bool         `json:"isError"`
	Result     *tool.Result `json:"result"`
	ToolCallID string       `json:"toolCallId"`
	ToolName   string       `json:"toolName"`
}

func (AgentStartEvent) Kind() EventType          { return AgentStart }
func (AgentEndEvent) Kind() EventType            { return AgentEnd }
func (TurnStartEvent) Kind() EventType           { return TurnStart }
func (TurnEndEvent) Kind() EventType             { return TurnEnd }
func (MessageStartEvent) Kind() EventType        { return MessageStart }
func (MessageUpdateEvent) Kind() EventType       { return MessageUpdate }
func (MessageEndEvent) Kind() EventType          { return MessageEnd }
func (ToolExecutionStartEvent) Kind() EventType  { return ToolExecutionStart }
func (ToolExecutionUpdateEvent) Kind() EventType { return ToolExecutionUpdate }
func (ToolExecutionEndEvent) Kind() EventType    { return ToolExecutionEnd }
