package tool

import (
	"context"
	"encoding/json"

	"github.com/rally-agent/rally/llm"
)

// AskFunc asks the user whether a call of the tool name with args may run.
// false, or an error, declines it.
type AskFunc func(ctx context.Context, name string, args json.RawMessage) (bool, error)

// Confirm returns ts with the tools named in names asking first (the
// tools.confirm setting). A declined call is a tool result the model
// reads, never a run; a call whose ctx ends while asking is an error, as
// any aborted call.
func Confirm(ts []Tool, names []string, ask AskFunc) []Tool {
	if len(names) == 0 || ask == nil {
		return ts
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = t
		if want[t.Spec().Name] {
			out[i] = asking{t: t, ask: ask}
		}
	}
	return out
}

type asking struct {
	t   Tool
	ask AskFunc
}

func (a asking) Spec() llm.Tool { return a.t.Spec() }

func (a asking) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	name := a.t.Spec().Name
	yes, err := a.ask(ctx, name, args)
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	if err != nil || !yes {
		return Result{Content: []llm.Content{llm.Text("The user declined to run " + name + " with these arguments. Ask them or try something else.")}, IsError: true}, nil
	}
	return a.t.Run(ctx, args)
}
