package cli

import (
	"fmt"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/settings"
)

// unknownContextWindow is assumed for a model nobody described: large
// enough for ordinary work, small enough that threshold compaction still
// happens before a real overflow of most models.
const unknownContextWindow = 128000

// modelFor describes the target's model from, in order: the provider's
// models in settings, the built-in catalog, and sensible defaults.
func modelFor(t settings.Target) (llm.Model, error) {
	id := t.Model
	if id == "" {
		for _, m := range llm.Catalog() {
			if m.Provider == t.Provider {
				id = m.ID
				break
			}
		}
	}
	if id == "" {
		return llm.Model{}, fmt.Errorf("no model for provider %q: give --model or set defaultModel", t.Provider)
	}
	m, ok := llm.Lookup(t.Provider, id)
	if !ok {
		m = llm.Model{ID: id, Name: id, Input: []string{"text"}, ContextWindow: unknownContextWindow, MaxTokens: 8192}
	}
	m.Provider, m.API, m.BaseURL = t.Provider, t.Config.API, t.Config.BaseURL
	for _, sm := range t.Config.Models {
		if sm.ID != id {
			continue
		}
		if sm.Name != "" {
			m.Name = sm.Name
		}
		if sm.ContextWindow > 0 {
			m.ContextWindow = sm.ContextWindow
		}
		if sm.MaxTokens > 0 {
			m.MaxTokens = sm.MaxTokens
		}
		m.Reasoning = m.Reasoning || sm.Reasoning
		if sm.Cost != (settings.Cost{}) {
			m.Cost = llm.ModelCost(sm.Cost)
		}
	}
	return m, nil
}

// providerFor builds the client for the target's API with key.
func providerFor(t settings.Target, key string) (llm.Provider, error) {
	o := llm.ClientOptions{
		BaseURL: t.Config.BaseURL, APIKey: key, Provider: t.Provider,
		Timeout: t.Config.Timeout(), IdleTimeout: t.Config.IdleTimeout(), MaxEventBytes: t.Config.MaxEventBytes, MaxMessageBytes: t.Config.MaxMessageBytes,
		Resume: t.Config.Resume,
	}
	if d, ok := apis.Lookup(t.Config.API); ok {
		return d.New(o), nil
	}
	return nil, fmt.Errorf("provider %q: unknown api %q", t.Provider, t.Config.API)
}
