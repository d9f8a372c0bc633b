package cli

import (
	"fmt"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
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
