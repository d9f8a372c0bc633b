package settings

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaJSON is the committed schema, generated from the types in
// settings.go by schema_test.go (go generate ./settings/). The repository
// root holds an identical copy for editors; go:embed cannot reach it.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema of a settings file.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// compiled is the validator for schemaJSON, built once.
var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("compile settings schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	// An absolute URL keeps the compiler from resolving a file path
	// against the working directory; nothing is ever fetched.
	const url = "https://github.com/rally-agent/rally/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("compile settings schema: %w", err)
	}
	return c.Compile(url)
})

// node is the part of a JSON Schema that messages and key lookups need.
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
	// PropertyNames constrains the keys of a map such as providers.
	PropertyNames *node `json:"propertyNames"`
	// Additional is additionalProperties when it is a schema; a map such
	// as providers has one, a struct has false.
	Additional *node `json:"-"`
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
	if bytes.HasPrefix(bytes.TrimSpace(extra.Additional), []byte("{")) {
		n.Additional = new(node)
		if err := json.Unmarshal(extra.Additional, n.Additional); err != nil {
			return err
		}
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

// validate checks a document against the schema. Values it cannot accept
// become errors; keys it does not know become warnings, because a newer
// rally's file must still work in an older one.
func validate(file string, doc any) (errs []*Error, warns []Warning) {
	sch, err := compiled()
	if err != nil {
		return []*Error{{File: file, Msg: err.Error()}}, nil
	}
	verr, ok := sch.Validate(plain(doc)).(*jsonschema.ValidationError)
	if !ok {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, leaf := range leaves(verr) {
		for _, e := range explain(file, doc, leaf) {
			key := e.Error()
			if !seen[key] {
				seen[key] = true
				errs = append(errs, e)
			}
		}
		warns = append(warns, unknownKeys(file, leaf)...)
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(warns, func(a, b Warning) int { return strings.Compare(a.Path, b.Path) })
	return errs, warns
}

// leaves flattens the error tree to the failures that have no causes.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if _, names := e.ErrorKind.(*kind.PropertyNames); names || len(e.Causes) == 0 {
		// A propertyNames failure's causes are about the key as a value;
		// the parent knows which object it belongs to.
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}
