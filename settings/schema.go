package settings

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
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
// fails when the generator starts emitting one that is not here).
type node struct {
	Ref         string           `json:"$ref"`
	Defs        map[string]*node `json:"$defs"`
	Type        string           `json:"type"`
	Description string           `json:"description"`
	Default     any              `json:"default"`
	Enum        []any            `json:"enum"`
	Minimum     *json.Number     `json:"minimum"`
	Maximum     *json.Number     `json:"maximum"`
	Pattern     string           `json:"pattern"`
	MinLength   *int             `json:"minLength"`
	MinItems    *int             `json:"minItems"`
	Items       *node            `json:"items"`
	Properties  map[string]*node `json:"properties"`
	Required    []string         `json:"required"`
	// PropertyNames constrains the keys of a map such as providers.
	PropertyNames *node `json:"propertyNames"`
	// Additional is additionalProperties when it is a schema; a map such
	// as providers has one, a struct has false.
	Additional *node `json:"-"`
	// closed is additionalProperties: false, a struct: keys it does not
	// list are unknown (warned about, not refused).
	closed bool
	// re is Pattern compiled once with the schema, not per value.
	re *regexp.Regexp
	// order lists Properties in schema (struct) order.
	order []string
	defs  map[string]*node
}

func (n *node) UnmarshalJSON(data []byte) error {
	type plainNode node
	var p plainNode
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	var extra struct {
		Additional json.RawMessage `json:"additionalProperties"`
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return err
	}
	*n = node(p)
	switch add := bytes.TrimSpace(extra.Additional); {
	case bytes.HasPrefix(add, []byte("{")):
		n.Additional = new(node)
		if err := json.Unmarshal(add, n.Additional); err != nil {
			return err
		}
	case bytes.Equal(add, []byte("false")):
		n.closed = true
	}
	if n.Pattern != "" {
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", n.Pattern, err)
		}
		n.re = re
	}
	if len(extra.Properties) > 0 {
		doc, _, err := parseDoc(extra.Properties)
		if err != nil {
			return err
		}
		if o, ok := doc.(*object); ok {
			n.order = o.keys
		}
	}
	return nil
}

// schemaRoot returns the parsed schema.
var schemaRoot = sync.OnceValue(func() *node {
	var root node
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		panic("settings: embedded schema.json: " + err.Error())
	}
	root.setDefs(root.Defs)
	return &root
})

// setDefs gives every node the definitions its $refs point into.
func (n *node) setDefs(defs map[string]*node) {
	if n == nil {
		return
	}
	n.defs = defs
	n.Items.setDefs(defs)
	n.Additional.setDefs(defs)
	n.PropertyNames.setDefs(defs)
	for _, p := range n.Properties {
		p.setDefs(defs)
	}
	for _, d := range n.Defs {
		d.setDefs(defs)
	}
}

// resolve follows a $ref, keeping the referring property's description.
func (n *node) resolve() *node {
	if n == nil || n.Ref == "" {
		return n
	}
	def := n.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
	if def == nil {
		return n
	}
	r := *def
	if n.Description != "" {
		r.Description = n.Description
	}
	return &r
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
