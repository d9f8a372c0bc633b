package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/session"
)

// A dropped stream that rally continues (retry.streaming "resume") is the
// same call going on, not a new attempt: the session still announces its
// wait as auto_retry_start with Resume set (pi clients count it in the
// retry budget), but the editor is told of a reconnect, as thoughts, so
// that the answer's text runs on uninterrupted and nothing reads
// "Retrying (1/3)". _meta.rally.resume and _meta.rally.streamResumed say
// it to editors that read them; there is no _meta.rally.retry.

// reconnecting is the update of the wait before a resume.
func reconnecting(e session.AutoRetryStartEvent) sdk.SessionUpdate {
	u := sdk.UpdateAgentThoughtText(fmt.Sprintf("\nThe stream dropped (%s); reconnecting in %s to continue the answer…\n",
		firstLine(e.ErrorMessage), wait(e.DelayMs)))
	u.AgentThoughtChunk.Meta = map[string]any{"rally": map[string]any{"resume": map[string]any{"method": e.Resume, "delayMs": e.DelayMs}}}
	return u
}

// reconnected is the update of stream_resumed: the answer goes on.
func reconnected(e session.StreamResumedEvent) sdk.SessionUpdate {
	u := sdk.UpdateAgentThoughtText("Reconnected; the answer goes on where it stopped.\n")
	m := map[string]any{"gapMs": e.GapMs, "continuation": e.Continuation}
	if e.Cursor != "" {
		m["cursor"] = e.Cursor
	}
	u.AgentThoughtChunk.Meta = map[string]any{"rally": map[string]any{"streamResumed": m}}
	return u
}
