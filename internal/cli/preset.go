package cli

import (
	"fmt"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
)

// presetWindow is the context window of the overflow demo's model: small
// enough that the seeded conversation has an older part to summarise.
const presetWindow = 4096

// presetOverflow is the overflow demo's error, in the OpenAI shape of the
// built-in one but stating the window the demo's model claims, so that
// what rally learns from it agrees with the status line. It states no
// request size: the seeded conversation fits by rally's own estimate, and
// a made-up size would teach rally a scale no compaction of it could meet.
var presetOverflow = fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, presetWindow)

// presetTarget fits a --preset demo's target to its preset. The overflow
// demo's window is written into the target's model list rather than onto
// one llm.Model, so that every path that describes the model from the
// target (the credential rotation, set_model) carries the same window.
func presetTarget(name string, t *settings.Target) {
	switch name {
	case "stall":
		// The demo should not take the default 60 s to notice the stall.
		t.Config.IdleTimeoutMs = 2000
	case "overflow":
		t.Config.Models = append([]settings.Model{{ID: t.Model, ContextWindow: presetWindow}}, t.Config.Models...)
	}
}

// seedPreset starts a new session of a --preset demo from the preset's
// conversation (llmtest.History), so that the overflow demo has something
// worth compacting on its first prompt. A resumed session is left alone.
func seedPreset(name string, j *journal.Journal, cfg *session.Config) error {
	turns := llmtest.History(name)
	if len(turns) == 0 || cfg.Resume != nil {
		return nil
	}
	seed := &journal.Loaded{}
	for _, t := range turns {
		m := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(t.Text)}, Timestamp: llm.Now()}
		if t.Role == "assistant" {
			m.Role, m.StopReason, m.Provider, m.Model = llm.Assistant, llm.Stop, "fake-llm", "fake-model"
		}
		id := ""
		if j != nil {
			var err error
			if id, err = j.AppendMessage(m, false); err != nil {
				return err
			}
		}
		seed.Messages = append(seed.Messages, m)
		seed.IDs = append(seed.IDs, id)
	}
	cfg.Resume = seed
	return nil
}
