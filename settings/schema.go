package settings

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// schemaJSON is the committed schema, generated from the types in
// settings.go by schema_test.go (go generate ./settings/). The repository
// root holds an identical copy for editors; go:embed cannot reach it.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema of a settings file.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// node is the part of a JSON Schema that validation, messages and key
// lookups need: exactly the keywords schema.json uses (agreement_test.go
// fails when the generator starts emitting one that is not here), but for
// the descriptions, which only editors read.
type node struct {
	Ref        string           `json:"$ref"`
	Defs       map[string]*node `json:"$defs"`
	Type       string           `json:"type"`
	Default    any              `json:"default"`
	Enum       []any            `json:"enum"`
	Minimum    *json.Number     `json:"minimum"`
	Maximum    *json.Number     `json:"maximum"`
	Pattern    string           `json:"pattern"`
	MinLength  *int             `json:"minLength"`
	MinItems   *int             `json:"minItems"`
	Items      *node            `json:"items"`
	Properties map[string]*node `json:"properties"`
	Required   []string         `json:"required"`
	// PropertyNames constrains the keys of a map such as providers.
	PropertyNames *node `json:"propertyNames"`
	// RawAdditional is additionalProperties as written: a schema (a map
	// such as providers has one) or false (a struct), which the tree holds
	// as Additional or closed. Only the tests decode the JSON
	// (readAdditional).
	RawAdditional json.RawMessage `json:"additionalProperties"`
	// Additional is additionalProperties when it is a schema.
	Additional *node `json:"-"`
	// closed is additionalProperties: false, a struct: keys it does not
	// list are unknown (warned about, not refused).
	closed bool
	// re is Pattern compiled once, at its first use, not per value.
	re func() *regexp.Regexp
	// order lists Properties sorted, for the suggestions of a typo.
	order []string
	defs  map[string]*node
}

// schemaRoot returns the schema. schemaTree (schema_tree.go) is
// schema.json as Go, generated with it: decoding the JSON with
// encoding/json at the first check took 373-440 µs and 82 KB, about 7 % of
// an RPC start with a settings file; building the tree takes 39-46 µs and
// 39 KB (BenchmarkSchema). TestSchemaTreeUpToDate holds the tree to the
// parse of schema.json.
var schemaRoot = sync.OnceValue(func() *node {
	root := schemaTree()
	root.prepare(root.Defs)
	return root
})

// num and intp make the schema tree's bounds.
func num(s string) *json.Number { n := json.Number(s); return &n }
func intp(i int) *int           { return &i }

// prepare finishes the tree below n: gives each node the definitions its
// $refs point into, readies its pattern and lists its properties.
func (n *node) prepare(defs map[string]*node) {
	n.defs = defs
	if p := n.Pattern; p != "" {
		// Compiled at its first use: a settings file meets one or two of
		// the schema's seven patterns, and compiling them all was a fifth
		// of building the schema. TestSchemaTreeIsTheEmbeddedSchema
		// compiles each.
		n.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(p) })
	}
	if n.order == nil { // schema_tree.go gives it
		n.order = slices.Sorted(maps.Keys(n.Properties))
	}
	n.each(func(c *node) { c.prepare(defs) })
}

// each calls fn for every node directly below n.
func (n *node) each(fn func(*node)) {
	for _, c := range []*node{n.Items, n.Additional, n.PropertyNames} {
		if c != nil {
			fn(c)
		}
	}
	for _, m := range []map[string]*node{n.Properties, n.Defs} {
		for _, c := range m {
			fn(c)
		}
	}
}

// resolve follows a $ref.
func (n *node) resolve() *node {
	if n == nil || n.Ref == "" {
		return n
	}
	if def := n.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]; def != nil {
		return def
	}
	return n
}

func (n *node) isArray() bool { return n.Type == "array" }

// child returns the schema of the value at seg below n, or nil if n allows
// no such key.
func (n *node) child(seg string) *node {
	switch {
	case n == nil:
		return nil
	case n.isArray():
		if _, ok := index(seg); ok {
			return n.Items.resolve()
		}
		return nil
	case n.Properties[seg] != nil:
		return n.Properties[seg].resolve()
	default:
		return n.Additional.resolve()
	}
}

// schemaAt returns the schema of the value at path, or nil for a key that
// is not a setting.
func schemaAt(path []string) *node {
	n := schemaRoot()
	for _, seg := range path {
		if n = n.child(seg); n == nil {
			return nil
		}
	}
	return n
}

// patternNames says in words what the schema's patterns ask for.
var patternNames = map[string]string{
	"^[^/]+/.+$":               `a "provider/model" string`,
	"^[A-Za-z_][A-Za-z0-9_]*$": "an environment variable name",
	providerName:               "a name of letters, digits, - and _",
	"^(/|~/|~$)":               "an absolute path, or one under ~/ (the home directory)",
}

// want says what n accepts, e.g. "an integer from 0 to 100".
func (n *node) want() string {
	if len(n.Enum) > 0 {
		q := make([]string, len(n.Enum))
		for i, e := range n.Enum {
			q[i] = fmt.Sprintf("%q", e)
		}
		return "one of " + strings.Join(q, ", ")
	}
	if s, ok := patternNames[n.Pattern]; ok {
		return s
	}
	switch n.Type {
	case "integer", "number":
		kind := "an integer"
		if n.Type == "number" {
			kind = "a number"
		}
		switch {
		case n.Minimum != nil && n.Maximum != nil:
			return fmt.Sprintf("%s from %s to %s", kind, n.Minimum, n.Maximum)
		case n.Minimum != nil:
			return fmt.Sprintf("%s of at least %s", kind, n.Minimum)
		}
		return kind
	case "boolean":
		return "true or false"
	case "string":
		if n.MinLength != nil && *n.MinLength > 0 {
			return "a non-empty string"
		}
		return "a string"
	case "array":
		if n.Items != nil && n.Items.Type == "string" {
			return "an array of strings"
		}
		return "an array"
	case "object":
		return "an object"
	}
	return "valid"
}

// describe names a document value in a message: strings quoted, numbers and
// literals as written, containers by kind.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if r := []rune(v); len(r) > 60 {
			v = string(r[:57]) + "..."
		}
		return fmt.Sprintf("%q", v)
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case nil:
		return "null"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
