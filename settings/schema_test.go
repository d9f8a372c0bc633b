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
		if *update {
			if err := os.WriteFile(f, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run go generate ./settings/\n%s", f, cmp.Diff(string(want), string(got)))
		}
	}
}

// TestSchemaDescribesEveryField keeps the web console's forms labelled.
func TestSchemaDescribesEveryField(t *testing.T) {
	var walk func(path string, n *node)
	walk = func(path string, n *node) {
		for _, k := range n.order {
			p := n.child(k)
			if p.Description == "" {
				t.Errorf("%s.%s has no description", path, k)
			}
			walk(path+"."+k, p)
		}
		if n.Items != nil {
			walk(path+"[]", n.Items.resolve())
		}
		if n.Additional != nil {
			walk(path+".*", n.Additional.resolve())
		}
	}
	walk("", schemaRoot())
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

// TestSchemaParseOnePass: the schema is decoded in one pass. A node that
// decodes its own bytes again (once to read additionalProperties, once for
// its key order) makes every nesting level scan and decode its part of the
// schema once more. The budget is this tree's count with a fifth of
// headroom; a count of allocations is deterministic, so this cannot flake.
func TestSchemaParseOnePass(t *testing.T) {
	const budget = 1700 // 1,401 on this tree; 8,378 when each node decoded itself again
	n := testing.AllocsPerRun(3, func() {
		if _, err := parseSchema(schemaJSON); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations", n)
	if n > budget {
		t.Errorf("parsing the schema took %.0f allocations, over the budget of %d: does a node decode its bytes again?", n, budget)
	}
}
