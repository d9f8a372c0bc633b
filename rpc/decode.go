package rpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
)

// DecodeError is a line that is not a valid command. Its response carries
// Command ("parse" when the line is not a JSON object with a type) and ID
// (when one could be read).
type DecodeError struct {
	ID      string
	Command string
	Msg     string
}

func (e *DecodeError) Error() string { return "rpc: " + e.Command + ": " + e.Msg }

// fieldSpec says which fields a command takes. Fields not listed are
// ignored, so that a client may send what a newer protocol knows.
type fieldSpec struct {
	message  bool // message (required) and images (optional)
	behavior bool // streamingBehavior
	model    bool // provider, modelId
	enabled  bool // enabled
	name     bool // name
	partial  bool // partial
	extras   bool // parentSession (new_session) or customInstructions (compact)
	// The string fields of pi's other commands, by JSON name, and whether
	// each is required.
	strs   map[string]bool
	bash   bool // command (required), excludeFromContext
	dialog bool // extension_ui_response: confirmed, cancelled, value
}

var commands = map[string]fieldSpec{
	CmdPrompt:               {message: true, behavior: true},
	CmdSteer:                {message: true},
	CmdFollowUp:             {message: true},
	CmdAbort:                {},
	CmdNewSession:           {extras: true},
	CmdGetState:             {},
	CmdGetMessages:          {},
	CmdSetModel:             {model: true},
	CmdGetAvailableModels:   {},
	CmdCompact:              {extras: true},
	CmdSetAutoCompaction:    {enabled: true},
	CmdSetAutoRetry:         {enabled: true},
	CmdAbortRetry:           {},
	CmdGetSessionStats:      {},
	CmdGetLastAssistantText: {},
	CmdSetSessionName:       {name: true},
	CmdSetEventOptions:      {partial: true},

	CmdCycleModel:                 {},
	CmdSetThinkingLevel:           {strs: map[string]bool{"level": true}},
	CmdCycleThinkingLevel:         {},
	CmdGetAvailableThinkingLevels: {},
	CmdSetSteeringMode:            {strs: map[string]bool{"mode": true}},
	CmdSetFollowUpMode:            {strs: map[string]bool{"mode": true}},
	CmdClearQueue:                 {},
	CmdBash:                       {bash: true},
	CmdAbortBash:                  {},
	CmdExportHTML:                 {strs: map[string]bool{"outputPath": false}},
	CmdSwitchSession:              {strs: map[string]bool{"sessionPath": true}},
	CmdFork:                       {strs: map[string]bool{"entryId": true}},
	CmdClone:                      {},
	CmdGetForkMessages:            {},
	CmdGetEntries:                 {strs: map[string]bool{"since": false}},
	CmdGetTree:                    {},
	CmdGetCommands:                {},
	CmdExtensionUIResponse:        {dialog: true},
}

// DecodeCommand reads one command line (without its line break). Every
// failure is a *DecodeError naming the field at fault.
func DecodeCommand(line []byte) (Command, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		if kind := jsonKind(trimSpace(line)); kind != "" && json.Valid(line) {
			return Command{}, &DecodeError{Command: CmdParse, Msg: "a command must be a JSON object, got " + kind}
		}
		return Command{}, &DecodeError{Command: CmdParse, Msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if fields == nil { // the line was null
		return Command{}, &DecodeError{Command: CmdParse, Msg: "a command must be a JSON object, got null"}
	}
	d := decoder{fields: fields, err: &DecodeError{Command: CmdParse}}
	var c Command
	if raw, ok := present(fields, "id"); ok {
		if err := json.Unmarshal(raw, &c.ID); err != nil {
			d.err.Msg = fmt.Sprintf("field \"id\" must be a string, got %s", jsonKind(raw))
			return Command{}, d.err
		}
		d.err.ID = c.ID
	}
	raw, ok := present(fields, "type")
	if !ok {
		d.err.Msg = `missing field "type" (the command name)`
		return Command{}, d.err
	}
	if err := json.Unmarshal(raw, &c.Type); err != nil {
		d.err.Msg = fmt.Sprintf("field \"type\" must be a string, got %s", jsonKind(raw))
		return Command{}, d.err
	}
	d.err.Command = c.Type
	spec, known := commands[c.Type]
	if !known {
		d.err.Msg = "unknown command: " + c.Type
		return Command{}, d.err
	}
	if !utf8.Valid(line) {
		// encoding/json would quietly turn the bad bytes into U+FFFD; a
		// prompt silently changed is worse than one refused.
		d.err.Msg = "the line is not valid UTF-8"
		return Command{}, d.err
	}
	if spec.message {
		d.str("message", &c.Message, true)
		d.images(&c.Images)
	}
	if spec.behavior {
		d.str("streamingBehavior", &c.StreamingBehavior, false)
		if d.ok() && c.StreamingBehavior != "" && c.StreamingBehavior != Steer && c.StreamingBehavior != FollowUp {
			d.fail(`field "streamingBehavior" must be "steer" or "followUp", got %q`, c.StreamingBehavior)
		}
	}
	if spec.model {
		d.str("provider", &c.Provider, true)
		d.str("modelId", &c.ModelID, true)
	}
	if spec.enabled {
		var on bool
		if d.value("enabled", &on, "a boolean", true) {
			c.Enabled = &on
		}
	}
	if spec.name {
		d.str("name", &c.Name, true)
	}
	if spec.partial {
		var on bool
		if d.value("partial", &on, "a boolean", true) {
			c.Partial = &on
		}
	}
	for name, required := range spec.strs {
		d.str(name, c.strField(name), required)
	}
	if spec.bash {
		d.str("command", &c.Shell, true)
		d.value("excludeFromContext", &c.ExcludeFromContext, "a boolean", false)
	}
	if spec.dialog {
		var yes bool
		if d.value("confirmed", &yes, "a boolean", false) {
			c.Confirmed = &yes
		}
		d.value("cancelled", &c.Cancelled, "a boolean", false)
		d.str("value", &c.Value, false)
	}
	if spec.extras {
		d.str("parentSession", &c.ParentSession, false)
		d.str("customInstructions", &c.CustomInstructions, false)
	}
	if !d.ok() {
		return Command{}, d.err
	}
	return c, nil
}

// strField is the field of c that a fieldSpec.strs name decodes into.
func (c *Command) strField(name string) *string {
	switch name {
	case "level":
		return &c.Level
	case "mode":
		return &c.Mode
	case "outputPath":
		return &c.OutputPath
	case "sessionPath":
		return &c.SessionPath
	case "entryId":
		return &c.EntryID
	case "since":
		return &c.Since
	}
	panic("rpc: no string field " + name) // a fieldSpec names a field that does not exist
}

// decoder reads fields and keeps the first error.
type decoder struct {
	fields map[string]json.RawMessage
	err    *DecodeError
}

func (d *decoder) ok() bool { return d.err.Msg == "" }

func (d *decoder) fail(format string, args ...any) {
	if d.ok() {
		d.err.Msg = fmt.Sprintf(format, args...)
	}
}

// value decodes field name into v; it reports whether the field was there
// and well typed. null counts as absent.
func (d *decoder) value(name string, v any, want string, required bool) bool {
	if !d.ok() {
		return false
	}
	raw, ok := present(d.fields, name)
	if !ok {
		if required {
			d.fail("missing field %q (%s)", name, want)
		}
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail("field %q must be %s, got %s", name, want, jsonKind(raw))
		return false
	}
	return true
}

func (d *decoder) str(name string, s *string, required bool) {
	d.value(name, s, "a string", required)
}

// images reads the optional images field: [{type:"image", data, mimeType}].
func (d *decoder) images(out *[]llm.Content) {
	var list []json.RawMessage
	if !d.value("images", &list, "an array", false) {
		return
	}
	for i, raw := range list {
		var img map[string]json.RawMessage
		if err := json.Unmarshal(raw, &img); err != nil || img == nil {
			d.fail("field \"images[%d]\" must be an object, got %s", i, jsonKind(raw))
			return
		}
		sub := decoder{fields: img, err: d.err}
		var typ, data, mime string
		sub.value("type", &typ, "a string", false)
		sub.value("data", &data, "a string (base64)", true)
		sub.value("mimeType", &mime, "a string", true)
		if !d.ok() {
			d.err.Msg = fmt.Sprintf("images[%d]: %s", i, d.err.Msg)
			return
		}
		if data == "" || mime == "" {
			d.fail("images[%d]: data and mimeType must not be empty", i)
			return
		}
		if typ != "" && typ != llm.ImageType {
			d.fail("field \"images[%d].type\" must be \"image\", got %q", i, typ)
			return
		}
		*out = append(*out, llm.Content{Type: llm.ImageType, Data: data, MimeType: mime})
	}
}

// present returns a field that is there and not null.
func present(fields map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// jsonKind names the JSON type of a value by its first byte.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return ""
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}
