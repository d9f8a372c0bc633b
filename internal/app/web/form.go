package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rally-agent/rally/settings"
)

// The settings form: a tree of groups, tables and fields built from the
// schema, each field named by its JSON path (retry.maxRetries,
// providers.openai.timeoutMs) so that the form, the validation errors and
// the file line up.

// Widgets.
const (
	wText   = "text"
	wNumber = "number"
	wSelect = "select"
	wLines  = "lines" // a string list, one per line
	wJSON   = "json"  // anything else, as JSON
)

type formGroup struct {
	Key, Title, Description string
	Fields                  []*field
	Groups                  []*formGroup
	Tables                  []*formTable
}

// formTable is a map of objects, one row per entry, the entries' scalar
// settings side by side (providers: base URL, key variable, timeouts,
// max retries).
type formTable struct {
	Key, Title, Description string
	Columns                 []column
	Rows                    []*tableRow
	// New is a blank row that adds an entry (a provider) under the name
	// typed into the input NewName. Its inputs are named _new.<key>.<name>
	// until the entry has a name; a save files them under their real path.
	New     *tableRow
	NewName string
}

// newPrefix starts the names of a table's blank row.
const newPrefix = "_new."

type column struct{ Name, Description, Hint, Default string }

type tableRow struct {
	Name  string
	Cells []*field
	Extra []*field // the entry's non-scalar settings (a provider's models)
}

type field struct {
	Name, Label, Description, Hint string
	Widget                         string
	Options                        []option
	Value                          string // as shown in the input
	Default                        string // "" when the setting has none
	Source                         string // default, global or project
	SourceName                     string // the file, for global and project
	ReadOnly                       bool   // set in a file that wins over the one edited
	edited                         bool   // changed by the save being made
	Bare                           bool   // its group already says what it is
	Errors                         []string
	Notes                          []string // said of the value on disk; unlike Errors, no reason to refuse a save
	node                           *schemaNode
}

type option struct {
	Value, Label string
	Selected     bool
}

// layers is what a form shows: the effective settings, and the two files.
type layers struct {
	eff     *settings.Settings
	global  *settings.File
	project *settings.File // nil when the project is the home directory
	target  *settings.File // the one being edited: global or project
	// invalid is set when the target fails validation and so is not in
	// eff: its fields then show what the file holds, so that a value can
	// be corrected (changed from what is there) in the form.
	invalid bool
	// keys are the API keys rally knows: a value holding one is not shown.
	keys []string
}

// source names where the value at key comes from.
func (l *layers) source(key string) (src, name string) {
	if l.project != nil {
		if _, ok := l.project.Get(key); ok {
			return "project", l.project.Name
		}
	}
	if _, ok := l.global.Get(key); ok {
		return "global", l.global.Name
	}
	return "default", ""
}

// buildForm lays out the whole schema with the values of l. The top
// level's plain settings go in a group of their own, General, ahead of the
// others.
func buildForm(root *schemaNode, l *layers) (*formGroup, error) {
	all, err := buildGroup("", "", root, l)
	if err != nil {
		return nil, err
	}
	top := &formGroup{Key: "general", Title: "General"}
	out := &formGroup{Groups: append([]*formGroup{top}, all.Groups...), Tables: all.Tables}
	for _, f := range all.Fields {
		if f.Widget != wJSON {
			top.Fields = append(top.Fields, f)
			continue
		}
		// Lists of objects (hooks) get a group of their own: they are
		// big, and a JSON box among one-line inputs hides them.
		f.Bare = true
		out.Groups = append(out.Groups, &formGroup{Key: f.Name, Title: f.Label, Description: f.Description, Fields: []*field{f}})
	}
	return out, nil
}

// buildGroup lays out an object's settings at key ("" for the root): plain
// ones as fields, objects as groups, maps of objects as tables.
func buildGroup(key, title string, n *schemaNode, l *layers) (*formGroup, error) {
	g := &formGroup{Key: key, Title: title, Description: n.Description}
	for _, name := range n.Properties.names {
		c := n.Properties.nodes[name]
		path := name
		if key != "" {
			path = key + "." + name
		}
		switch {
		case c.group():
			sub, err := buildGroup(path, name, c, l)
			if err != nil {
				return nil, err
			}
			g.Groups = append(g.Groups, sub)
		case c.table():
			t, err := buildTable(path, name, c, l)
			if err != nil {
				return nil, err
			}
			g.Tables = append(g.Tables, t)
		default:
			f, err := buildField(path, name, c, l)
			if err != nil {
				return nil, err
			}
			g.Fields = append(g.Fields, f)
		}
	}
	return g, nil
}

func buildTable(key, title string, n *schemaNode, l *layers) (*formTable, error) {
	t := &formTable{Key: key, Title: title, Description: n.Description}
	item := n.additional
	for _, name := range item.Properties.names {
		if c := item.Properties.nodes[name]; c.scalar() {
			col := column{Name: name, Description: c.Description, Hint: hint(key+".x."+name, c)}
			if len(c.Default) > 0 {
				col.Default = display(c, c.Default)
			}
			t.Columns = append(t.Columns, col)
		}
	}
	raw, err := l.eff.Get(key)
	if err != nil {
		return nil, err
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("settings form: %s: %w", key, err)
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, rowName := range names {
		row := &tableRow{Name: rowName}
		for _, name := range item.Properties.names {
			c := item.Properties.nodes[name]
			f, err := buildField(key+"."+rowName+"."+name, name, c, l)
			if err != nil {
				return nil, err
			}
			if c.scalar() {
				row.Cells = append(row.Cells, f)
			} else {
				row.Extra = append(row.Extra, f)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.NewName = newPrefix + key
	t.New = &tableRow{}
	for _, name := range item.Properties.names {
		if c := item.Properties.nodes[name]; c.scalar() {
			f := newField(newPrefix+key+"."+name, name, t.Columns[len(t.New.Cells)].Hint, c)
			f.Source = "new"
			t.New.Cells = append(t.New.Cells, f)
		}
	}
	return t, nil
}

// tables lists every table of the form.
func (g *formGroup) tables() []*formTable {
	out := slices.Clone(g.Tables)
	for _, s := range g.Groups {
		out = append(out, s.tables()...)
	}
	return out
}

func buildField(key, label string, n *schemaNode, l *layers) (*field, error) {
	raw, err := l.eff.Get(key)
	if err != nil {
		return nil, err
	}
	f := newField(key, label, hint(key, n), n)
	f.Source, f.SourceName = l.source(key)
	f.ReadOnly = f.Source == "project" && l.target != l.project
	if own, ok := l.target.Get(key); ok && l.invalid && !f.ReadOnly {
		raw = own
	}
	f.Value = display(n, raw)
	if looksLikeKey(f.Value, l.keys...) {
		// A key typed into the file by hand (or a known one, in a URL's
		// query or a hook's argument): never shown.
		f.Value = ""
		f.Notes = append(f.Notes, f.SourceName+": "+key+": looks like an API key, so it is not shown; keys belong in rally auth, not in settings: remove it from the file")
	}
	if f.Widget == wSelect {
		f.selectValue(f.Value)
	}
	return f, nil
}

// newField is the input for a setting of schema n, named name, still
// without a value.
func newField(name, label, hint string, n *schemaNode) *field {
	f := &field{Name: name, Label: label, Description: n.Description, Hint: hint, node: n}
	if len(n.Default) > 0 {
		f.Default = display(n, n.Default)
	}
	switch {
	case n.Type == "boolean":
		f.Widget = wSelect
		f.Options = []option{{Value: "true", Label: "true"}, {Value: "false", Label: "false"}}
	case len(n.Enum) > 0:
		f.Widget = wSelect
		for _, e := range n.Enum {
			s := fmt.Sprint(e)
			f.Options = append(f.Options, option{Value: s, Label: s})
		}
	case n.Type == "integer" || n.Type == "number":
		f.Widget = wNumber
	case n.Type == "string":
		f.Widget = wText
	case n.stringList():
		f.Widget = wLines
	default:
		f.Widget = wJSON
	}
	if f.Widget == wSelect {
		// The empty choice removes the key from the file edited, so the
		// other file or the default applies again.
		inherit := "(not set)"
		if f.Default != "" {
			inherit = "(default: " + f.Default + ")"
		}
		f.Options = append([]option{{Value: "", Label: inherit}}, f.Options...)
		f.selectValue("")
	}
	return f
}

// hint says what an input takes, in the words of the validation messages;
// nothing for a choice from a list.
func hint(key string, n *schemaNode) string {
	switch {
	case n.Type == "boolean" || len(n.Enum) > 0:
		return ""
	case n.stringList():
		return settings.Expects(key) + ", one per line"
	case !n.scalar():
		return settings.Expects(key) + ", as JSON"
	}
	if h := settings.Expects(key); h != "a string" { // which says nothing
		return h
	}
	return ""
}

// selectValue marks the option of value v; the empty one when none fits.
func (f *field) selectValue(v string) {
	found := false
	for i := range f.Options {
		f.Options[i].Selected = f.Options[i].Value == v && v != ""
		found = found || f.Options[i].Selected
	}
	if !found && len(f.Options) > 0 {
		f.Options[0].Selected = true
	}
}

// display turns a JSON value into the text of its input.
func display(n *schemaNode, raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	switch {
	case n.Type == "string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case n.stringList():
		var ss []string
		if json.Unmarshal(raw, &ss) == nil {
			return strings.Join(ss, "\n")
		}
	case n.scalar():
		return string(raw)
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") == nil {
		return b.String()
	}
	return string(raw)
}

// parse turns what was submitted for f into the JSON to store; nil means
// remove the key from the file. A value that is not of the field's type is
// stored as a string, so that validation refuses it with the message
// `rally settings validate` gives (must be an integer from 0 to 100, got
// "abc"). Only a JSON box that is not JSON fails here.
func (f *field) parse(v string) (json.RawMessage, error) {
	n := f.node
	if f.Widget != wJSON && f.Widget != wLines {
		v = strings.TrimSpace(v)
	}
	switch f.Widget {
	case wSelect:
		if v == "" {
			return nil, nil
		}
		if n.Type == "boolean" && (v == "true" || v == "false") {
			return json.RawMessage(v), nil
		}
		return json.Marshal(v)
	case wNumber:
		if v == "" {
			return nil, nil
		}
		if json.Valid([]byte(v)) && strings.Trim(v, "+-.0123456789eE") == "" {
			return json.RawMessage(v), nil
		}
		return json.Marshal(v)
	case wText:
		if v == "" {
			return nil, nil
		}
		return json.Marshal(v)
	case wLines:
		list := []string{}
		for line := range strings.Lines(v) {
			if s := strings.TrimSpace(line); s != "" {
				list = append(list, s)
			}
		}
		return json.Marshal(list)
	default:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		if !json.Valid([]byte(v)) {
			var x any
			err := json.Unmarshal([]byte(v), &x)
			return nil, fmt.Errorf("must be JSON (%v)", err)
		}
		return json.RawMessage(v), nil
	}
}

// fields lists every field of the form.
func (g *formGroup) fields() []*field {
	out := slices.Clone(g.Fields)
	for _, t := range g.Tables {
		for _, r := range t.Rows {
			out = append(out, r.Cells...)
			out = append(out, r.Extra...)
		}
	}
	for _, s := range g.Groups {
		out = append(out, s.fields()...)
	}
	return out
}
