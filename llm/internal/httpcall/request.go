package httpcall

import (
	"bytes"
	"encoding/json"
)

// budgets are the thinking budgets, in tokens, of rally's reasoning levels.
var budgets = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// ThinkingBudget is the token budget of a reasoning level, for the APIs
// that take a budget rather than a level (Anthropic, Gemini): 0 for "off",
// "" and levels it does not know.
func ThinkingBudget(level string) int { return budgets[level] }

// Object returns args when it is a JSON object, else {}: the APIs take a
// tool call's arguments only as an object, and a call that was cut short
// or came from another provider may hold anything.
func Object(args json.RawMessage) json.RawMessage {
	// Checked, not decoded: every request carries every call again.
	if t := bytes.TrimLeft(args, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

// emptySchema stands in for a tool without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Schema returns a tool's parameter schema, or an empty object schema for
// a tool without parameters: OpenAI and Anthropic want an object schema
// even then.
func Schema(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		return emptySchema
	}
	return params
}
