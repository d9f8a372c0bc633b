package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
)

func TestDecodeCommand(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name    string
		line    string
		want    Command
		command string // of the error response
		id      string
		errHas  string
	}{
		{name: "prompt", line: `{"id":"1","type":"prompt","message":"hi"}`, want: Command{ID: "1", Type: CmdPrompt, Message: "hi"}},
		{name: "prompt with images and behaviour", line: `{"type":"prompt","message":"look","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"streamingBehavior":"followUp"}`,
			want: Command{Type: CmdPrompt, Message: "look", Images: []llm.Content{{Type: llm.ImageType, Data: "aGk=", MimeType: "image/png"}}, StreamingBehavior: FollowUp}},
		{name: "null optional fields", line: `{"type":"prompt","message":"x","images":null,"streamingBehavior":null,"id":null}`, want: Command{Type: CmdPrompt, Message: "x"}},
		{name: "unknown fields ignored", line: `{"type":"get_state","future":[1,2]}`, want: Command{Type: CmdGetState}},
		{name: "U+2028 inside a string", line: "{\"type\":\"steer\",\"message\":\"a\u2028b\u2029c\"}", want: Command{Type: CmdSteer, Message: "a\u2028b\u2029c"}},
		{name: "escaped U+2028", line: `{"type":"follow_up","message":"a\u2028b"}`, want: Command{Type: CmdFollowUp, Message: "a\u2028b"}},
		{name: "set_model", line: `{"type":"set_model","provider":"openai","modelId":"gpt-4.1"}`, want: Command{Type: CmdSetModel, Provider: "openai", ModelID: "gpt-4.1"}},
		{name: "set_auto_retry false", line: `{"type":"set_auto_retry","enabled":false}`, want: Command{Type: CmdSetAutoRetry, Enabled: &no}},
		{name: "set_auto_compaction true", line: `{"type":"set_auto_compaction","enabled":true}`, want: Command{Type: CmdSetAutoCompaction, Enabled: &yes}},
		{name: "new_session with parent", line: `{"type":"new_session","parentSession":"/x.jsonl"}`, want: Command{Type: CmdNewSession, ParentSession: "/x.jsonl"}},
		{name: "compact with instructions", line: `{"type":"compact","customInstructions":"code"}`, want: Command{Type: CmdCompact, CustomInstructions: "code"}},
		{name: "set_event_options", line: `{"type":"set_event_options","partial":false}`, want: Command{Type: CmdSetEventOptions, Partial: &no}},
		{name: "surrounding space", line: "  {\"type\":\"abort\"}\t", want: Command{Type: CmdAbort}},

		{name: "not JSON", line: `hello`, command: CmdParse, errHas: "invalid JSON"},
		{name: "truncated", line: `{"type":"prompt","message":"hi`, command: CmdParse, errHas: "invalid JSON"},
		{name: "array", line: `[{"type":"abort"}]`, command: CmdParse, errHas: "must be a JSON object, got an array"},
		{name: "string", line: `"abort"`, command: CmdParse, errHas: "got a string"},
		{name: "number", line: `42`, command: CmdParse, errHas: "got a number"},
		{name: "null", line: `null`, command: CmdParse, errHas: "got null"},
		{name: "no type", line: `{"id":"7","message":"x"}`, command: CmdParse, id: "7", errHas: `missing field "type"`},
		{name: "type not a string", line: `{"id":"7","type":3}`, command: CmdParse, id: "7", errHas: `"type" must be a string, got a number`},
		{name: "id not a string", line: `{"id":7,"type":"abort"}`, command: CmdParse, errHas: `"id" must be a string`},
		{name: "unknown command", line: `{"id":"u","type":"frobnicate"}`, command: "frobnicate", id: "u", errHas: "unknown command: frobnicate"},
		{name: "missing message", line: `{"id":"m","type":"prompt"}`, command: CmdPrompt, id: "m", errHas: `missing field "message"`},
		{name: "message not a string", line: `{"type":"steer","message":["x"]}`, command: CmdSteer, errHas: `"message" must be a string, got an array`},
		{name: "bad behaviour", line: `{"type":"prompt","message":"x","streamingBehavior":"now"}`, command: CmdPrompt, errHas: `"steer" or "followUp"`},
		{name: "images not an array", line: `{"type":"prompt","message":"x","images":{}}`, command: CmdPrompt, errHas: `"images" must be an array`},
		{name: "image without data", line: `{"type":"prompt","message":"x","images":[{"type":"image","mimeType":"image/png"}]}`, command: CmdPrompt, errHas: `images[0]: missing field "data"`},
		{name: "image of another type", line: `{"type":"prompt","message":"x","images":[{"type":"text","data":"a","mimeType":"m"}]}`, command: CmdPrompt, errHas: `"images[0].type" must be "image"`},
		{name: "image not an object", line: `{"type":"prompt","message":"x","images":[1]}`, command: CmdPrompt, errHas: `"images[0]" must be an object`},
		{name: "enabled missing", line: `{"type":"set_auto_retry"}`, command: CmdSetAutoRetry, errHas: `missing field "enabled" (a boolean)`},
		{name: "enabled as string", line: `{"type":"set_auto_retry","enabled":"false"}`, command: CmdSetAutoRetry, errHas: `"enabled" must be a boolean, got a string`},
		{name: "partial missing", line: `{"type":"set_event_options"}`, command: CmdSetEventOptions, errHas: `missing field "partial" (a boolean)`},
		{name: "modelId missing", line: `{"type":"set_model","provider":"openai"}`, command: CmdSetModel, errHas: `missing field "modelId"`},
		{name: "name a number", line: `{"type":"set_session_name","name":1}`, command: CmdSetSessionName, errHas: `"name" must be a string`},
		{name: "invalid UTF-8", line: "{\"id\":\"b\",\"type\":\"prompt\",\"message\":\"caf\xe9\"}", command: CmdPrompt, id: "b", errHas: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCommand([]byte(tt.line))
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("command (-want +got):\n%s", diff)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %+v, %v; want a DecodeError", got, err)
			}
			if de.Command != tt.command || de.ID != tt.id || !strings.Contains(de.Msg, tt.errHas) {
				t.Errorf("got command %q id %q msg %q; want %q %q …%s…", de.Command, de.ID, de.Msg, tt.command, tt.id, tt.errHas)
			}
		})
	}
}

// FuzzDecodeCommand: the decoder never panics, every failure names a
// command for its response, and every success is a known command whose
// required fields are there and which encodes back to a line that decodes
// to the same command.
func FuzzDecodeCommand(f *testing.F) {
	seeds := []string{
		`{"id":"1","type":"prompt","message":"hi","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"streamingBehavior":"steer"}`,
		`{"type":"set_auto_retry","enabled":true}`, `{"type":"set_model","provider":"p","modelId":"m"}`,
		`{"type":"set_session_name","name":"n"}`, `{"type":"abort_retry"}`, `[]`, `null`, `"x"`, `{`, "{\"type\":\"steer\",\"message\":\"\u2028\"}",
		"{\"type\":\"prompt\",\"message\":\"\xff\"}", `{"type":"prompt","message":"x","images":[null]}`, `{"id":{},"type":"abort"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := DecodeCommand(line)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Command == "" && !json.Valid(line) || de.Msg == "" {
				t.Fatalf("%q: error %#v", line, err)
			}
			return
		}
		spec, ok := commands[c.Type]
		if !ok || !utf8.Valid(line) {
			t.Fatalf("%q accepted as %+v", line, c)
		}
		if spec.enabled && c.Enabled == nil {
			t.Fatalf("%q: enabled not set", line)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("re-encoded %s: %v", b, err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", line, diff)
		}
	})
}
