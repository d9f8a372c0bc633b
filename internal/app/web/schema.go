package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/rally-agent/rally/settings"
)

// schemaNode is the part of the settings JSON Schema (settings.Schema) that
// the form needs: what each setting is, in the order the schema lists it.
// The form is built from it at every request, so a setting added to the
// settings types appears on the page without the page changing.
type schemaNode struct {
	Ref         string                 `json:"$ref"`
	Defs        map[string]*schemaNode `json:"$defs"`
	Type        string                 `json:"type"`
	Title       string                 `json:"title"`
	Description string                 `json:"description"`
	Default     json.RawMessage        `json:"default"`
	Enum        []any                  `json:"enum"`
	Items       *schemaNode            `json:"items"`
	Properties  props                  `json:"properties"`
	// AdditionalRaw is additionalProperties: false, or the schema of a
	// map's values (providers).
	AdditionalRaw json.RawMessage `json:"additionalProperties"`
	additional    *schemaNode
}

// props are an object's properties in schema order.
type props struct {
	names []string
	nodes map[string]*schemaNode
}

func (p *props) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("properties: want an object")
	}
	p.nodes = map[string]*schemaNode{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var n schemaNode
		if err := d.Decode(&n); err != nil {
			return err
		}
		p.names = append(p.names, name)
		p.nodes[name] = &n
	}
	return nil
}

// loadSchema parses the settings schema once.
var loadSchema = sync.OnceValues(func() (*schemaNode, error) {
	var root schemaNode
	if err := json.Unmarshal(settings.Schema(), &root); err != nil {
		return nil, fmt.Errorf("web: settings schema: %w", err)
	}
	if err := root.link(root.Defs); err != nil {
		return nil, err
	}
	return &root, nil
})

// link resolves $refs (keeping the referring description) and decodes
// additionalProperties, throughout the tree.
func (n *schemaNode) link(defs map[string]*schemaNode) error {
	if n == nil {
		return nil
	}
	if n.Ref != "" {
		def := defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
		if def == nil {
			return fmt.Errorf("web: settings schema: unknown $ref %q", n.Ref)
		}
		desc := n.Description
		*n = *def
		n.Ref = ""
		if desc != "" {
			n.Description = desc
		}
		// def itself is linked below as part of $defs; linking the copy
		// again resolves its children, which are shared pointers.
	}
	if a := bytes.TrimSpace(n.AdditionalRaw); bytes.HasPrefix(a, []byte("{")) {
		n.additional = new(schemaNode)
		if err := json.Unmarshal(a, n.additional); err != nil {
			return err
		}
	}
	for _, c := range []*schemaNode{n.Items, n.additional} {
		if err := c.link(defs); err != nil {
			return err
		}
	}
	for _, name := range n.Properties.names {
		if err := n.Properties.nodes[name].link(defs); err != nil {
			return err
		}
	}
	return nil
}

// scalar reports a value edited in one input: a string, number, integer or
// boolean.
func (n *schemaNode) scalar() bool {
	switch n.Type {
	case "string", "number", "integer", "boolean":
		return true
	}
	return false
}

// stringList reports an array of plain strings, edited one per line.
func (n *schemaNode) stringList() bool {
	return n.Type == "array" && n.Items != nil && n.Items.Type == "string" && len(n.Items.Enum) == 0
}

// group reports an object with named properties (retry, compaction).
func (n *schemaNode) group() bool { return n.Type == "object" && len(n.Properties.names) > 0 }

// table reports a map of objects (providers): one row per key.
func (n *schemaNode) table() bool {
	return n.Type == "object" && n.additional != nil && n.additional.group()
}
