// Package apis is the list of wire formats rally speaks: the definitions
// its provider packages export (llm.APIDef), in one place. Client
// construction, the settings' api enum and schema, the command line's help
// and the fake LLM's coverage test all read it, so a new wire format is a
// provider package and one line here. It lives above the provider
// packages (it imports them) and below everything that builds clients.
package apis

import (
	"slices"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/anthropic"
	"github.com/rally-agent/rally/llm/gemini"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llm/sim"
)

// all is in the order help and the schema list them.
var all = []llm.APIDef{openai.CompletionsAPI, openai.ResponsesAPI, anthropic.API, gemini.API, sim.API}

// All returns the definitions.
func All() []llm.APIDef { return slices.Clone(all) }

// Lookup returns the definition of the API named name.
func Lookup(name string) (llm.APIDef, bool) {
	for _, d := range all {
		if d.Name == name {
			return d, true
		}
	}
	return llm.APIDef{}, false
}

// Names returns the API names, as providers.<name>.api takes them.
func Names() []string {
	out := make([]string, len(all))
	for i, d := range all {
		out[i] = d.Name
	}
	return out
}

// Networked returns the names of the APIs spoken over HTTP (all but the
// sim): what --api points at a server with, and what llmtest serves.
func Networked() []string {
	var out []string
	for _, d := range all {
		if d.DefaultBaseURL != "" {
			out = append(out, d.Name)
		}
	}
	return out
}
