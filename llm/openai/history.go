package openai

import "github.com/rally-agent/rally/llm"

// history returns the messages to send, repaired so the API accepts them.
// Both APIs refuse a tool call without its result and a result without its
// call, which a conversation reaches after an abort or a failed stream:
//
//   - an assistant message that ended in error or was aborted is left out
//     (its tool calls may be cut short), and so are the results of its
//     calls;
//   - a tool call that got no result before the next user or assistant
//     message gets a stand-in error result, so the model learns it did not
//     run.
func history(msgs []llm.Message) []llm.Message {
	var dropped map[string]bool
	out := make([]llm.Message, 0, len(msgs))
	var open []llm.Content // calls of the last assistant message still waiting for a result
	closeOpen := func() {
		for _, c := range open {
			out = append(out, llm.Message{
				Role: llm.ToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
				Content: []llm.Content{llm.Text("No result: the tool call was not executed.")},
			})
		}
		open = nil
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.Assistant:
			closeOpen()
			if m.StopReason == llm.Error || m.StopReason == llm.Aborted {
				for _, c := range m.ToolCalls() {
					if dropped == nil {
						dropped = map[string]bool{}
					}
					dropped[c.ID] = true
				}
				continue
			}
			open = m.ToolCalls()
		case llm.ToolResult:
			if dropped[m.ToolCallID] {
				continue
			}
			for i, c := range open {
				if c.ID == m.ToolCallID {
					open = append(open[:i:i], open[i+1:]...)
					break
				}
			}
		default:
			closeOpen()
		}
		out = append(out, m)
	}
	closeOpen()
	return out
}
