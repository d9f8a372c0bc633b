package rpc

import (
	"encoding/json"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Command names: the "type" of a command line, and the "command" of its
// response.
const (
	CmdPrompt               = "prompt"
	CmdSteer                = "steer"
	CmdFollowUp             = "follow_up"
	CmdAbort                = "abort"
	CmdNewSession           = "new_session"
	CmdGetState             = "get_state"
	CmdGetMessages          = "get_messages"
	CmdSetModel             = "set_model"
	CmdGetAvailableModels   = "get_available_models"
	CmdCompact              = "compact"
	CmdSetAutoCompaction    = "set_auto_compaction"
	CmdSetAutoRetry         = "set_auto_retry"
	CmdAbortRetry           = "abort_retry"
	CmdGetSessionStats      = "get_session_stats"
	CmdGetLastAssistantText = "get_last_assistant_text"
	CmdSetSessionName       = "set_session_name"
	// The rest of pi's protocol (its docs/rpc.md of 0.73 and 1.6).
	CmdCycleModel                 = "cycle_model"
	CmdSetThinkingLevel           = "set_thinking_level"
	CmdCycleThinkingLevel         = "cycle_thinking_level"
	CmdGetAvailableThinkingLevels = "get_available_thinking_levels"
	CmdSetSteeringMode            = "set_steering_mode"
	CmdSetFollowUpMode            = "set_follow_up_mode"
	CmdClearQueue                 = "clear_queue"
	CmdBash                       = "bash"
	CmdAbortBash                  = "abort_bash"
	CmdExportHTML                 = "export_html"
	CmdSwitchSession              = "switch_session"
	CmdFork                       = "fork"
	CmdClone                      = "clone"
	CmdGetForkMessages            = "get_fork_messages"
	CmdGetEntries                 = "get_entries"
	CmdGetTree                    = "get_tree"
	CmdGetCommands                = "get_commands"
	// CmdExtensionUIResponse answers a dialog of pi's extension UI
	// protocol (extension_ui_request): rally asks through it before the
	// tools of tools.confirm run (see Dialogs). As in pi, it gets no
	// response of its own.
	CmdExtensionUIResponse = "extension_ui_response"
	// CmdSetEventOptions is rally's own: it chooses the form of
	// message_update (see Command.Partial).
	CmdSetEventOptions = "set_event_options"
	// CmdParse is the command of the response to a line that is not a
	// command at all.
	CmdParse = "parse"
)

// Values of Command.StreamingBehavior: what a prompt sent during a run
// becomes.
const (
	Steer    = "steer"
	FollowUp = "followUp"
)

// Queue modes of State (set_steering_mode, set_follow_up_mode).
const (
	OneAtATime = session.OneAtATime
	AllAtOnce  = session.AllAtOnce
)

// Command is one line of the server's input. Only the fields of its Type
// are meaningful.
type Command struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`

	// prompt, steer, follow_up.
	Message string        `json:"message,omitempty"`
	Images  []llm.Content `json:"images,omitempty"`
	// StreamingBehavior (prompt) says what a prompt sent while a run is
	// going becomes: Steer or FollowUp. Without it such a prompt is
	// refused.
	StreamingBehavior string `json:"streamingBehavior,omitempty"`

	// set_model.
	Provider string `json:"provider,omitempty"`
	ModelID  string `json:"modelId,omitempty"`

	// set_auto_compaction, set_auto_retry.
	Enabled *bool `json:"enabled,omitempty"`

	// set_session_name.
	Name string `json:"name,omitempty"`

	// set_event_options: false makes message_update carry only its stream
	// event's delta and indices, never the partial message (output linear
	// in the answer's length); true, the default, is pi's form.
	Partial *bool `json:"partial,omitempty"`

	// set_thinking_level: a level of get_available_thinking_levels.
	Level string `json:"level,omitempty"`
	// set_steering_mode, set_follow_up_mode: OneAtATime or AllAtOnce.
	Mode string `json:"mode,omitempty"`
	// bash: the command line, and whether its output stays out of the
	// model's context.
	Shell              string `json:"command,omitempty"`
	ExcludeFromContext bool   `json:"excludeFromContext,omitempty"`
	// export_html: where to write; "" derives a name in the working
	// directory.
	OutputPath string `json:"outputPath,omitempty"`
	// switch_session: the session file to load.
	SessionPath string `json:"sessionPath,omitempty"`
	// fork: the entry id of the user message to fork from.
	EntryID string `json:"entryId,omitempty"`
	// get_entries: only the entries after this entry id.
	Since string `json:"since,omitempty"`
	// extension_ui_response: the answer to the dialog whose id is ID.
	Confirmed *bool  `json:"confirmed,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Value     string `json:"value,omitempty"`

	// new_session: accepted for compatibility, not used.
	ParentSession string `json:"parentSession,omitempty"`
	// compact: accepted for compatibility, not used.
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// Response answers one command. Data is set on success for commands that
// return something; Error on failure.
type Response struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"` // always "response"
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Event is an event line, decoded (wire.DecodeEvent) into the same type
// the session emits; only the fields of its Type are set.
type Event = session.Event

// State is the data of get_state.
type State struct {
	Model                 *llm.Model `json:"model"`
	ThinkingLevel         string     `json:"thinkingLevel"`
	IsStreaming           bool       `json:"isStreaming"`
	IsCompacting          bool       `json:"isCompacting"`
	SteeringMode          string     `json:"steeringMode"`
	FollowUpMode          string     `json:"followUpMode"`
	SessionFile           string     `json:"sessionFile,omitempty"`
	SessionID             string     `json:"sessionId"`
	SessionName           string     `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool       `json:"autoCompactionEnabled"`
	MessageCount          int        `json:"messageCount"`
	PendingMessageCount   int        `json:"pendingMessageCount"`
	// rally's own: the retry lifecycle a client can see. During a retry
	// wait IsStreaming is false and IsRetrying true.
	AutoRetryEnabled bool `json:"autoRetryEnabled"`
	IsRetrying       bool `json:"isRetrying"`
	RetryAttempt     int  `json:"retryAttempt"`
	// LoadWarnings says what loading the resumed session file skipped or
	// repaired (a torn last line, dropped bad lines); absent when nothing.
	LoadWarnings []string `json:"loadWarnings,omitempty"`
}

// SessionStats is the data of get_session_stats.
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            Tokens        `json:"tokens"`
	Cost              float64       `json:"cost"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
}

// Tokens are the summed usage of the session's assistant messages; Total
// is the sum of the other four.
type Tokens struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUsage estimates how full the model's context window is.
type ContextUsage struct {
	Tokens        int     `json:"tokens"`
	ContextWindow int     `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// PromptResult is the data of prompt, steer and follow_up (pi 1.6):
// whether the message started a run or was queued. rally has no input
// handlers, so it is never pi's "handled".
type PromptResult struct {
	Disposition string `json:"disposition"`
}

var (
	started = PromptResult{Disposition: "started"}
	queued  = PromptResult{Disposition: "queued"}
)

// NewSessionResult is the data of new_session. rally never cancels.
type NewSessionResult struct {
	Cancelled bool `json:"cancelled"`
}

// textResult is the data of get_last_assistant_text; Text is null when no
// assistant message has text.
type textResult struct {
	Text *string `json:"text"`
}

type messagesResult struct {
	Messages []llm.Message `json:"messages"`
}

type modelsResult struct {
	Models []llm.Model `json:"models"`
}

// Error is a command's failure as the server reported it.
type Error struct {
	Command string
	Message string
}

func (e *Error) Error() string { return "rpc: " + e.Command + ": " + e.Message }

// MarshalJSON writes the fields the command's type requires even when
// empty (an empty prompt is still a prompt), and leaves out the others.
func (c Command) MarshalJSON() ([]byte, error) {
	type plain Command
	spec := commands[c.Type]
	var required struct {
		plain
		Message  *string `json:"message,omitempty"`
		Provider *string `json:"provider,omitempty"`
		ModelID  *string `json:"modelId,omitempty"`
		Name     *string `json:"name,omitempty"`
	}
	required.plain = plain(c)
	if spec.message {
		required.Message = &c.Message
	}
	if spec.model {
		required.Provider, required.ModelID = &c.Provider, &c.ModelID
	}
	if spec.name {
		required.Name = &c.Name
	}
	return json.Marshal(required)
}
