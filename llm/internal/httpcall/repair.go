package httpcall

import (
	"slices"

	"github.com/rally-agent/rally/llm"
)

// NoResult is the text of the stand-in error result Repair gives a tool
// call that has none in the conversation. Such a call comes from a
// finished answer, so rally had started the tool when the run was cut
// short (a crash, kill -9): the side effect may have happened, and the
// model must check before running it again rather than assume it did not.
const NoResult = "No result: the tool was started, but its result was lost when rally stopped. Check whether it took effect before running it again."

// Repair returns msgs mended so that every provider API accepts them. All
// of them refuse a tool call without its result and a result without its
// call, which a conversation reaches after an abort, a failed stream or a
// compaction that cut between a call and its result:
//
//   - an assistant message that failed or was aborted is left out (its
//     content and calls may be cut short), and with it the results of its
//     calls, which then have no call;
//   - a tool call whose result does not come before the next turn (a user
//     or assistant message), or before the end, gets a stand-in error
//     result saying NoResult, so the model learns that the tool did not
//     run;
//   - a tool result whose call is not waiting for one is left out.
//
// keep, if not nil, reports whether the provider sends a message other
// than a tool result at all (a message that converts to nothing, or of a
// role it does not know); one it does not send is left out, and since it
// is no turn, the calls before it still take their results after it. id,
// if not nil, maps tool-call ids before results are matched to calls, for
// an API that rewrites ids: two ids it maps alike are the same call.
//
// msgs is not modified. When nothing needs mending (the usual case) the
// result is msgs itself, so that a long conversation is not copied for
// every request; callers only read it.
func Repair(msgs []llm.Message, keep func(*llm.Message) bool, id func(string) string) []llm.Message {
	var r repairer
	r.in = msgs
	var open []llm.Content // the last answer's calls still without a result
	settle := func() {
		for _, c := range open {
			r.add(llm.Message{Role: llm.ToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
				Content: []llm.Content{llm.Text(NoResult)}})
		}
		open = open[:0]
	}
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Role == llm.ToolResult:
			if k := slices.IndexFunc(open, func(c llm.Content) bool { return sameCall(id, c.ID, m.ToolCallID) }); k >= 0 {
				open = slices.Delete(open, k, k+1)
				r.keep(i)
			} else {
				r.drop()
			}
			continue
		case m.Role == llm.Assistant && (m.StopReason == llm.Error || m.StopReason == llm.Aborted),
			keep != nil && !keep(m):
			r.drop()
			continue
		}
		settle()
		r.keep(i)
		if m.Role == llm.Assistant {
			for _, c := range m.Content {
				if c.Type == llm.ToolCallType {
					open = append(open, c)
				}
			}
		}
	}
	settle()
	return r.result()
}

// repairer builds Repair's result, copying only once it differs from the
// input: until then the result is in[:n].
type repairer struct {
	in     []llm.Message
	n      int           // in[:n] is the result so far, while out is nil
	out    []llm.Message // the result, once it differs
	copied bool
}

// keep adds in[i], which comes next in the input.
func (r *repairer) keep(i int) {
	if !r.copied && r.n == i {
		r.n++
		return
	}
	r.fork()
	r.out = append(r.out, r.in[i])
}

// drop leaves the next message of the input out.
func (r *repairer) drop() { r.fork() }

// add adds a message the input does not have.
func (r *repairer) add(m llm.Message) {
	r.fork()
	r.out = append(r.out, m)
}

func (r *repairer) fork() {
	if !r.copied {
		r.copied = true
		r.out = append(make([]llm.Message, 0, len(r.in)+1), r.in[:r.n]...)
	}
}

func (r *repairer) result() []llm.Message {
	if !r.copied {
		return r.in[:r.n]
	}
	return r.out
}

func sameCall(id func(string) string, call, result string) bool {
	if id == nil {
		return call == result
	}
	return id(call) == id(result)
}
