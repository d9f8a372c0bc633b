package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The package validates settings with its own small validator (validate.go)
// so that the binary does not link a full JSON Schema implementation. These
// tests keep it honest against one: santhosh-tekuri/jsonschema, linked into
// the tests only.

// reference is santhosh's compiled schema.json, built once per test binary.
var reference = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// An absolute URL keeps the compiler from resolving a file path
	// against the working directory; nothing is ever fetched.
	const url = "https://github.com/rally-agent/rally/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// TestSchemaIsValidJSONSchema compiles schema.json, which also checks it
// against the draft 2020-12 metaschema: editors and other tools read it.
func TestSchemaIsValidJSONSchema(t *testing.T) {
	if _, err := reference(); err != nil {
		t.Fatal(err)
	}
}

// supported are the keywords validate.go implements or that only annotate.
// A keyword outside it would be silently ignored by rally.
var supported = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "$ref": true, "title": true, "description": true,
	"default": true, "type": true, "enum": true, "minimum": true, "maximum": true, "pattern": true,
	"minLength": true, "minItems": true, "items": true, "properties": true, "required": true,
	"additionalProperties": true, "propertyNames": true,
}

// TestSchemaKeywordsSupported fails when the generator starts emitting a
// keyword (or a form of one) that validate.go does not implement.
func TestSchemaKeywordsSupported(t *testing.T) {
	var raw any
	if err := json.Unmarshal(schemaJSON, &raw); err != nil {
		t.Fatal(err)
	}
	var walk func(at string, s any)
	walk = func(at string, s any) {
		m, ok := s.(map[string]any)
		if !ok {
			t.Errorf("%s: schema is %T, want an object", at, s)
			return
		}
		for k, v := range m {
			switch {
			case !supported[k]:
				t.Errorf("%s: keyword %q is not implemented by validate.go", at, k)
			case k == "$ref" && len(m) > 2, k == "$ref" && len(m) == 2 && m["description"] == nil:
				t.Errorf("%s: $ref has siblings other than description, which resolve() drops", at)
			case k == "$ref" && !strings.HasPrefix(v.(string), "#/$defs/"):
				t.Errorf("%s: $ref %q does not point into $defs", at, v)
			case k == "type":
				if _, ok := v.(string); !ok {
					t.Errorf("%s: type %v is not a single type name", at, v)
				}
			case k == "enum":
				for _, e := range v.([]any) {
					if _, ok := e.(string); !ok {
						t.Errorf("%s: enum value %v is not a string", at, e)
					}
				}
			case k == "additionalProperties":
				if b, ok := v.(bool); ok && b {
					t.Errorf("%s: additionalProperties: true; write nothing instead", at)
				} else if !ok {
					walk(at+"/"+k, v)
				}
			case k == "items" || k == "propertyNames":
				walk(at+"/"+k, v)
			case k == "properties" || k == "$defs":
				for name, sub := range v.(map[string]any) {
					walk(at+"/"+k+"/"+name, sub)
				}
			}
		}
	}
	walk("#", raw)
}

// agreementDocs are settings documents, valid and not, on which both
// validators must agree. They seed FuzzValidateAgreement too.
var agreementDocs = []struct {
	doc   string
	valid bool
}{
	{`{}`, true},
	{`{"$schema": "./schema.json", "defaultProvider": "openai", "defaultModel": "gpt-4.1"}`, true},
	{`{"agent": {"maxTurns": 1}, "retry": {"maxRetries": 0, "jitter": 0.25, "streaming": "beforeOutput"}}`, true},
	{`{"agent": {"maxTurns": 2.0}}`, true}, // JSON Schema's integer; checkGo refuses it
	{`{"agent": {"maxTurns": 1e2}}`, true},
	{`{"agent": {"maxTurns": 10000.0000000000000000000001}}`, false},
	{`{"retry": {"jitter": 1.0000000000000000000000001}}`, false},
	{`{"retry": {"jitter": -0}}`, true},
	{`{"retry": {"fallbackModels": ["openai/gpt-4.1", "openrouter/anthropic/claude"]}}`, true},
	{`{"compaction": {"enabled": false, "thresholdPercent": 100, "keepRecentTokens": 0}}`, true},
	{`{"providers": {"p-1_x": {"api": "sim", "apiKeyEnv": "_KEY1", "models": [{"id": "m", "cost": {"input": 1.5, "cacheWrite": 0}}]}}}`, true},
	{`{"hooks": [{"on": ["agent_end"], "command": ["notify-send", "done"], "timeoutMs": 100}]}`, true},
	{`{"providers": {}}`, true},
	{`{"hooks": []}`, true},
	// wrong types
	{`{"retry": {"maxRetries": "three"}}`, false},
	{`{"retry": true}`, false},
	{`{"agent": null}`, false},
	{`{"defaultModel": 5}`, false},
	{`{"compaction": {"enabled": "yes"}}`, false},
	{`{"hooks": {"on": ["agent_end"]}}`, false},
	{`{"providers": []}`, false},
	{`{"providers": {"p": "sim"}}`, false},
	{`{"retry": {"fallbackModels": "openai/gpt-4.1"}}`, false},
	{`{"agent": {"maxTurns": 2.5}}`, false},
	{`[]`, false},
	{`"settings"`, false},
	// out of range
	{`{"retry": {"maxRetries": 500, "jitter": 1.5}}`, false},
	{`{"retry": {"maxRetries": -1}}`, false},
	{`{"agent": {"maxTurns": 0}}`, false},
	{`{"compaction": {"thresholdPercent": 101}}`, false},
	{`{"providers": {"p": {"models": [{"id": "m", "cost": {"output": -0.01}}]}}}`, false},
	{`{"providers": {"p": {"timeoutMs": 3600001}}}`, false},
	{`{"providers": {"p": {"maxEventBytes": 1023}}}`, false},
	{`{"providers": {"p": {"maxEventBytes": 1048576}}}`, true},
	// bad enum
	{`{"retry": {"streaming": "never"}}`, false},
	{`{"providers": {"x": {"api": "openai"}}}`, false},
	{`{"providers": {"x": {"api": 1}}}`, false},
	{`{"hooks": [{"on": ["agent_end", "agent_ended"], "command": ["x"]}]}`, false},
	// bad pattern, minLength, minItems, required
	{`{"retry": {"fallbackModels": ["gpt-4.1"]}}`, false},
	{`{"retry": {"fallbackModels": ["/m"]}}`, false},
	{`{"providers": {"openai": {"apiKeyEnv": "sk-proj-secret"}}}`, false},
	{`{"providers": {"openai": {"apiKeyEnv": "1KEY"}}}`, false},
	{`{"providers": {"p": {"models": [{"id": ""}]}}}`, false},
	{`{"providers": {"p": {"models": [{"name": "no id"}]}}}`, false},
	{`{"hooks": [{"on": [], "command": [""]}]}`, false},
	{`{"hooks": [{"command": ["x"]}, {}]}`, false},
	// unknown keys at several depths
	{`{"theme": "dark"}`, false},
	{`{"retry": {"maxRetires": 5}}`, false},
	{`{"providers": {"openai": {"organization": "x"}}}`, false},
	{`{"providers": {"p": {"models": [{"id": "m", "cost": {"input": 1, "currency": "EUR"}}]}}}`, false},
	{`{"hooks": [{"on": ["agent_end"], "command": ["x"], "shell": true}]}`, false},
	// bad provider names
	{`{"providers": {"my.host": {"api": "sim"}}}`, false},
	{`{"providers": {"a[0]": {}, "-x": {}, "": {}}}`, false},
	{`{"providers": {"bad name": {"api": "nope", "models": [{"id": 1}]}}}`, false},
	// arrays with bad items, nested providers.*.models[*]
	{`{"retry": {"fallbackModels": ["a/b", 3, null]}}`, false},
	{`{"hooks": [{"on": ["agent_end"], "command": ["x", 1]}]}`, false},
	{`{"providers": {"p": {"models": [{"id": "a"}, {"id": "b", "contextWindow": 0, "maxTokens": 1.5, "reasoning": 1}]}}}`, false},
	{`{"providers": {"p": {"models": [{"id": "a", "cost": []}, "m"]}}}`, false},
	{`{"providers": {"p": {"models": {"id": "a"}}}}`, false},
}

// TestValidateAgreement checks both validators over agreementDocs, and that
// each document is as valid as the table says.
func TestValidateAgreement(t *testing.T) {
	for _, tt := range agreementDocs {
		t.Run(tt.doc, func(t *testing.T) {
			doc, _, err := parseDoc([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			ours := checkAgreement(t, doc)
			if ours != tt.valid {
				t.Errorf("valid = %v, the table says %v", ours, tt.valid)
			}
		})
	}
}

func FuzzValidateAgreement(f *testing.F) {
	for _, tt := range agreementDocs {
		f.Add([]byte(tt.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, _, err := parseDoc(data)
		if err != nil {
			return
		}
		checkAgreement(t, doc)
	})
}

// checkAgreement validates doc with both validators and fails t unless they
// agree: on the verdict, and on which keywords failed where. It returns our
// verdict.
func checkAgreement(t *testing.T, doc any) (valid bool) {
	t.Helper()
	sch, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	func() {
		defer func() {
			// santhosh dereferences a nil big.Rat on numbers with
			// exponents past a million; those say nothing about us.
			if r := recover(); r != nil {
				t.Skipf("reference validator panicked: %v", r)
			}
		}()
		if verr, ok := sch.Validate(plain(doc)).(*jsonschema.ValidationError); ok {
			theirs = referenceFailures(verr)
		}
	}()
	var ours []string
	for _, f := range schemaFailures(doc) {
		keyword := f.kind.String()
		if f.kind == failMinItems {
			keyword = fmt.Sprintf("minItems %d<%d", f.got, f.want)
		}
		ours = append(ours, describeFailure(f.at, keyword, f.keys, f.key))
	}
	slices.Sort(theirs)
	slices.Sort(ours)
	if (len(theirs) == 0) != (len(ours) == 0) {
		t.Fatalf("verdicts differ: santhosh valid = %v, ours = %v\ndocument: %s\n(-santhosh +ours):\n%s",
			len(theirs) == 0, len(ours) == 0, encodeDoc(doc, ""), cmp.Diff(theirs, ours))
	}
	if diff := cmp.Diff(theirs, ours); diff != "" {
		t.Errorf("failures differ for %s(-santhosh +ours):\n%s", encodeDoc(doc, ""), diff)
	}
	errs, warns := validate("f", doc)
	if valid := len(errs) == 0 && len(warns) == 0; valid != (len(ours) == 0) {
		t.Errorf("validate: valid = %v with failures %v", valid, ours)
	}
	return len(ours) == 0
}

// referenceFailures flattens santhosh's error tree to leaf failures, in
// the form describeFailure gives ours.
func referenceFailures(e *jsonschema.ValidationError) []string {
	if _, names := e.ErrorKind.(*kind.PropertyNames); !names && len(e.Causes) > 0 {
		// A propertyNames failure's causes are about the key as a value.
		var out []string
		for _, c := range e.Causes {
			out = append(out, referenceFailures(c)...)
		}
		return out
	}
	var keyword, key string
	var keys []string
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		keyword = "type"
	case *kind.Enum:
		keyword = "enum"
	case *kind.Minimum:
		keyword = "minimum"
	case *kind.Maximum:
		keyword = "maximum"
	case *kind.Pattern:
		keyword = "pattern"
	case *kind.MinLength:
		keyword = "minLength"
	case *kind.MinItems:
		keyword = fmt.Sprintf("minItems %d<%d", k.Got, k.Want)
	case *kind.Required:
		keyword, keys = "required", k.Missing
	case *kind.AdditionalProperties:
		keyword, keys = "additionalProperties", k.Properties
	case *kind.PropertyNames:
		keyword, key = "propertyNames", k.Property
	default:
		keyword = fmt.Sprintf("unexpected %T", k)
	}
	return []string{describeFailure(e.InstanceLocation, keyword, keys, key)}
}

// describeFailure is one failure as the agreement tests compare them. keys
// are sorted: santhosh lists unknown keys in map order.
func describeFailure(at []string, keyword string, keys []string, key string) string {
	keys = slices.Sorted(slices.Values(keys))
	s := fmt.Sprintf("%q %s", at, keyword)
	if len(keys) > 0 {
		s += fmt.Sprintf(" %q", keys)
	}
	if key != "" {
		s += fmt.Sprintf(" key %q", key)
	}
	return s
}
