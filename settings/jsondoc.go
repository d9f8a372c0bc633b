package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The settings files are edited as JSON documents, not as structs, so that a
// save keeps keys this version does not know and the order the user chose.
// A document value is one of: *object, []any, string, json.Number, bool, nil.

// object is a JSON object that remembers its key order.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces the value of k in place, or appends k at the end.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

// parseDoc parses one JSON value. Syntax errors carry the line and column.
// dups lists the paths of keys given twice in one object (the last wins, as
// with encoding/json).
func parseDoc(data []byte) (v any, dups [][]string, err error) {
	// encoding/json's Decoder reports offsets relative to its buffer, so a
	// full Unmarshal first finds the exact position of any syntax error.
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, nil, &Error{Line: line, Column: col, Msg: se.Error()}
		}
		return nil, nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	p := parser{d: d}
	v, err = p.value(nil)
	return v, p.dups, err
}

// position converts the byte offset of a json.SyntaxError (the count of
// bytes read, the bad one included) to a 1-based line and column in runes.
func position(data []byte, offset int64) (line, col int) {
	i := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:i]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

type parser struct {
	d    *json.Decoder
	dups [][]string
}

func (p *parser) value(at []string) (any, error) {
	t, err := p.d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		if t == '[' {
			arr := []any{}
			for p.d.More() {
				v, err := p.value(append(slices.Clip(at), fmt.Sprint(len(arr))))
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := p.d.Token()
			return arr, err
		}
		o := newObject()
		for p.d.More() {
			kt, err := p.d.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			sub := append(slices.Clip(at), k)
			v, err := p.value(sub)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; dup {
				p.dups = append(p.dups, sub)
			}
			o.set(k, v)
		}
		_, err := p.d.Token()
		return o, err
	default:
		return t, nil // string, json.Number, bool or nil
	}
}

// encodeDoc writes v as indented JSON in document order, with a final
// newline. HTML characters are not escaped: these files are for people.
func encodeDoc(v any, indent string) []byte {
	var b bytes.Buffer
	writeValue(&b, v, indent, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, indent string, depth int) {
	nl := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, d))
	}
	switch v := v.(type) {
	case *object:
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, v.vals[k], indent, depth+1)
		}
		nl(depth)
		b.WriteByte('}')
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			writeValue(b, e, indent, depth+1)
		}
		nl(depth)
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("settings: %T in a document", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// detectIndent returns the indentation of the first indented line of a
// file, so a save keeps the user's style; two spaces when there is none.
func detectIndent(data []byte) string {
	for line := range bytes.Lines(data) {
		trimmed := bytes.TrimLeft(line, " \t")
		if n := len(line) - len(trimmed); n > 0 && len(bytes.TrimSpace(trimmed)) > 0 {
			return string(line[:n])
		}
	}
	return "  "
}

// plain converts a document value to encoding/json's generic form
// (map[string]any), for encoding/json (unmarshalDoc) and for comparing
// documents in tests.
func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plain(v.vals[k])
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	default:
		return v
	}
}

// clone deep-copies a document value.
func clone(v any) any {
	switch v := v.(type) {
	case *object:
		o := newObject()
		for _, k := range v.keys {
			o.set(k, clone(v.vals[k]))
		}
		return o
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = clone(e)
		}
		return a
	default:
		return v
	}
}

// merge lays src over dst key by key: objects merge recursively, any other
// value (arrays included) replaces. Neither argument is modified.
func merge(dst, src any) any {
	d, dok := dst.(*object)
	s, sok := src.(*object)
	if !dok || !sok {
		return clone(src)
	}
	out := clone(d).(*object)
	for _, k := range s.keys {
		if old, ok := out.get(k); ok {
			out.set(k, merge(old, s.vals[k]))
		} else {
			out.set(k, clone(s.vals[k]))
		}
	}
	return out
}

// toDoc converts a Go value to a document through its JSON encoding.
func toDoc(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic("settings: marshal: " + err.Error()) // only our own types come here
	}
	doc, _, err := parseDoc(data)
	if err != nil {
		panic("settings: reparse: " + err.Error())
	}
	return doc
}

// unmarshalDoc decodes a document into a Go value.
func unmarshalDoc(doc any, v any) error {
	data, err := json.Marshal(plain(doc))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// lookup returns the value at path, or false if any step is missing.
func lookup(doc any, path []string) (any, bool) {
	cur := doc
	for _, seg := range path {
		switch c := cur.(type) {
		case *object:
			if c == nil {
				return nil, false
			}
			v, ok := c.get(seg)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := index(seg)
			if !ok || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// walk calls fn for every value in doc, containers before their contents.
func walk(v any, path []string, fn func(path []string, v any)) {
	fn(path, v)
	switch v := v.(type) {
	case *object:
		for _, k := range v.keys {
			walk(v.vals[k], joinPath(path, k), fn)
		}
	case []any:
		for i, e := range v {
			walk(e, joinPath(path, strconv.Itoa(i)), fn)
		}
	}
}
