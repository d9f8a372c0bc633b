package settings

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/invopop/jsonschema"
	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/session"
)

var update = flag.Bool("update", false, "rewrite schema.json from the Go types")

// schemaFiles are the committed copies: the one embedded in the package and
// the one at the repository root for editors and the web console.
var schemaFiles = []string{"schema.json", filepath.Join("..", "schema.json")}

// generateSchema reflects the settings types into a JSON Schema. It lives
// in a test so that the rally binary does not carry the reflector.
func generateSchema(t *testing.T) []byte {
	t.Helper()
	r := &jsonschema.Reflector{ExpandedStruct: true, RequiredFromJSONSchemaTags: true}
	s := r.Reflect(&Settings{})
	s.ID = "https://github.com/rally-agent/rally/schema.json"
	s.Title = "rally settings"
	s.Description = "rally's settings file: $RALLY_HOME/settings.json (default ~/.rally/settings.json) or .rally/settings.json in a project. Every key is optional; missing keys take their defaults."
	// Provider names are written in dotted keys (providers.NAME.baseUrl),
	// so they cannot contain dots or brackets.
	providers, _ := s.Properties.Get("providers")
	providers.PropertyNames = &jsonschema.Schema{Pattern: providerName}
	// providers.<name>.api takes the registry's APIs, described by it.
	api, _ := s.Definitions["Provider"].Properties.Get("api")
	var docs []string
	for _, d := range apis.All() {
		api.Enum = append(api.Enum, d.Name)
		docs = append(docs, d.Name+" ("+d.Doc+")")
	}
	api.Description = "Wire API: " + strings.Join(docs, ", ") + "."
	// A hook's "on" names session events: the session's list, not a copy.
	on, _ := s.Definitions["Hook"].Properties.Get("on")
	for _, k := range session.EventTypes() {
		on.Items.Enum = append(on.Items.Enum, string(k))
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSchemaUpToDate fails when a struct tag changed and schema.json was not
// regenerated. Run `go generate ./settings/` (or go test -update) to fix it.
func TestSchemaUpToDate(t *testing.T) {
	want := generateSchema(t)
	for _, f := range schemaFiles {
		generated(t, f, want)
	}
}

// generated writes want to the committed file f under -update, and else
// fails unless f holds it.
func generated(t *testing.T, f string, want []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(f, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go generate ./settings/\n%s", f, cmp.Diff(string(want), string(got)))
	}
}

// TestSchemaDescribesEveryField keeps the web console's forms labelled:
// every property has a description, its own or its $ref's definition's.
// It reads schema.json itself: the schema tree leaves descriptions out.
func TestSchemaDescribesEveryField(t *testing.T) {
	var raw map[string]any
	if err := json.Unmarshal(schemaJSON, &raw); err != nil {
		t.Fatal(err)
	}
	defs, _ := raw["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			if d, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
				return d
			}
		}
		return s
	}
	seen := map[string]bool{}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if seen[path] {
			return
		}
		seen[path] = true
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			p, _ := v.(map[string]any)
			if p["description"] == nil && resolve(p)["description"] == nil {
				t.Errorf("%s.%s has no description", path, k)
			}
			walk(path+"."+k, resolve(p))
		}
		for key, suffix := range map[string]string{"items": "[]", "additionalProperties": ".*"} {
			if c, ok := s[key].(map[string]any); ok {
				walk(path+suffix, resolve(c))
			}
		}
	}
	walk("", raw)
	if len(seen) < 20 {
		t.Errorf("walked %d schemas: the walk does not reach the properties", len(seen))
	}
}

// TestSchemaDefaults checks that every default the schema shows is what
// Default returns.
func TestSchemaDefaults(t *testing.T) {
	doc := toDoc(Default())
	for _, path := range [][]string{
		{"agent", "maxTurns"}, {"retry", "enabled"}, {"retry", "maxRetries"}, {"retry", "baseDelayMs"},
		{"retry", "maxDelayMs"}, {"retry", "jitter"}, {"retry", "streaming"}, {"compaction", "enabled"},
		{"compaction", "thresholdPercent"}, {"compaction", "keepRecentTokens"},
		{"tools", "maxOutputBytes"}, {"tools", "maxOutputLines"},
	} {
		t.Run(strings.Join(path, "."), func(t *testing.T) {
			n := schemaAt(path)
			if n == nil || n.Default == nil {
				t.Fatal("no default in the schema")
			}
			got, _ := lookup(doc, path)
			if diff := cmp.Diff(describe(normalizeNumber(n.Default)), describe(got)); diff != "" {
				t.Errorf("schema default differs from Default() (-schema +Default):\n%s", diff)
			}
		})
	}
	for path, want := range map[string]int{
		"providers.x.timeoutMs": DefaultTimeoutMs, "providers.x.idleTimeoutMs": DefaultIdleTimeoutMs, "providers.x.maxEventBytes": DefaultMaxEventBytes, "providers.x.maxMessageBytes": DefaultMaxMessageBytes,
		"hooks[0].timeoutMs": DefaultHookTimeoutMs,
	} {
		p, _ := ParsePath(path)
		if d := schemaAt(p).Default; describe(normalizeNumber(d)) != describe(json.Number(itoa(want))) {
			t.Errorf("%s: schema default %v, want %d", path, d, want)
		}
	}
}

// normalizeNumber turns encoding/json's float64 into the json.Number that
// documents hold.
func normalizeNumber(v any) any {
	if f, ok := v.(float64); ok {
		b, _ := json.Marshal(f)
		return json.Number(b)
	}
	return v
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
