package httpcall

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/llm"
)

// errorShape covers the error bodies of the four APIs and the
// OpenAI-compatible servers: {"error":{"message","type","code","status"}}
// (OpenAI, Gemini, llama.cpp, OpenRouter), {"type":"error","error":{…}}
// (Anthropic), {"error":"…"} (Ollama), {"message":"…"} and {"detail":"…"}.
type errorShape struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
	Detail  any             `json:"detail"`
	Type    string          `json:"type"`
}

type errorObject struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
	Status  string `json:"status"`
}

// APIError builds the error for a failed response or an error event. keys
// are redacted (internal/redact) from the body and message.
func APIError(provider string, status int, h http.Header, body []byte, keys ...string) *llm.APIError {
	text := redact.Secrets(string(body), keys...)
	e := &llm.APIError{Provider: provider, StatusCode: status, Header: h, Body: text}
	e.Type, e.Code, e.Message = ParseError([]byte(text))
	if e.Message == "" && status == 0 {
		e.Message = strings.TrimSpace(text)
	}
	return e
}

// ParseError reads the type, code and message of an error body of any of
// the known shapes. Unknown shapes give empty strings.
func ParseError(body []byte) (typ, code, msg string) {
	b := strings.TrimSpace(string(body))
	// Gemini sometimes wraps the object in an array.
	if strings.HasPrefix(b, "[") {
		var arr []json.RawMessage
		if json.Unmarshal([]byte(b), &arr) == nil && len(arr) > 0 {
			b = string(arr[0])
		}
	}
	var s errorShape
	if json.Unmarshal([]byte(b), &s) != nil {
		return "", "", ""
	}
	msg = s.Message
	if d, ok := s.Detail.(string); ok && msg == "" {
		msg = d
	}
	if len(s.Error) > 0 {
		var str string
		var obj errorObject
		switch {
		case json.Unmarshal(s.Error, &str) == nil:
			msg = str
		case json.Unmarshal(s.Error, &obj) == nil:
			msg, typ = obj.Message, obj.Type
			if obj.Status != "" {
				code = obj.Status
			}
			switch c := obj.Code.(type) {
			case string:
				code = c
			case float64:
				if code == "" {
					code = fmt.Sprint(c)
				}
			}
		}
	}
	if typ == "" && s.Type != "error" {
		typ = s.Type
	}
	return typ, code, msg
}
