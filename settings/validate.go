package settings

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The settings schema is checked by this small validator rather than a
// general JSON Schema library: a full implementation compiles every
// draft's metaschema at package init, which cost rally 10+ ms of startup.
// It implements only the keywords schema.json uses, with the semantics of
// draft 2020-12; agreement_test.go holds it to the same verdicts as
// santhosh-tekuri/jsonschema on a table of documents and under fuzzing.

// failKind is the schema keyword a value failed.
type failKind int

const (
	failType failKind = iota
	failEnum
	failMinimum
	failMaximum
	failPattern
	failMinLength
	failMinItems
	failRequired
	failAdditional
	failPropertyNames
)

// String returns the keyword, as tests and debugging want it.
func (k failKind) String() string {
	return [...]string{"type", "enum", "minimum", "maximum", "pattern", "minLength", "minItems",
		"required", "additionalProperties", "propertyNames"}[k]
}

// failure is one schema violation: what explain and unknownKeys turn into
// messages.
type failure struct {
	kind failKind
	at   []string // the value's path in the document
	// keys are the missing keys (required) or the unknown ones
	// (additionalProperties), in document or schema order.
	keys []string
	key  string // the offending key of a propertyNames failure
	// got and want are the item counts of a minItems failure.
	got, want int
}

// validate checks a document against the schema. Values it cannot accept
// become errors; keys it does not know become warnings, because a newer
// rally's file must still work in an older one.
func validate(file string, doc any) (errs []*Error, warns []Warning) {
	seen := map[string]bool{}
	for _, f := range schemaFailures(doc) {
		for _, e := range explain(file, doc, f) {
			// Two keywords can fail alike (minLength and pattern on "");
			// say it once.
			key := e.Error()
			if !seen[key] {
				seen[key] = true
				errs = append(errs, e)
			}
		}
		warns = append(warns, unknownKeys(file, f)...)
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(warns, func(a, b Warning) int { return strings.Compare(a.Path, b.Path) })
	return errs, warns
}

// schemaFailures returns every violation of the schema in doc.
func schemaFailures(doc any) []failure {
	var c checker
	c.value(schemaRoot(), doc, nil)
	return c.fails
}

// checker collects failures over one document.
type checker struct {
	fails []failure
}

func (c *checker) fail(f failure) { c.fails = append(c.fails, f) }

// value checks v against n in the order draft 2020-12 validators use: a
// wrong type or a value outside the enum ends the check of v (nothing
// below it is meaningful); the other keywords all report.
func (c *checker) value(n *node, v any, at []string) {
	// schema.json's $refs have only a description beside them (the
	// keyword test checks it), so following the ref loses no keyword.
	n = n.resolve()
	if n.Type != "" && !hasType(n.Type, v) {
		c.fail(failure{kind: failType, at: at})
		return
	}
	if n.Enum != nil && !slices.ContainsFunc(n.Enum, func(e any) bool { return equalScalar(e, v) }) {
		c.fail(failure{kind: failEnum, at: at})
		return
	}
	switch v := v.(type) {
	case *object:
		c.object(n, v, at)
	case []any:
		c.array(n, v, at)
	case string:
		c.str(n, v, at)
	case json.Number:
		c.number(n, v, at)
	}
}

func (c *checker) object(n *node, o *object, at []string) {
	var missing []string
	for _, r := range n.Required {
		if _, ok := o.get(r); !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		c.fail(failure{kind: failRequired, at: at, keys: missing})
	}
	var unknown []string
	for _, k := range o.keys {
		switch {
		case n.Properties[k] != nil:
			c.value(n.Properties[k], o.vals[k], joinPath(at, k))
		case n.Additional != nil:
			c.value(n.Additional, o.vals[k], joinPath(at, k))
		case n.closed:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		c.fail(failure{kind: failAdditional, at: at, keys: unknown})
	}
	if n.PropertyNames == nil {
		return
	}
	for _, k := range o.keys {
		// The key is checked as a string value; whatever fails in it is
		// one failure of the object, which names the key.
		var sub checker
		if sub.value(n.PropertyNames, k, nil); len(sub.fails) > 0 {
			c.fail(failure{kind: failPropertyNames, at: at, key: k})
		}
	}
}

func (c *checker) array(n *node, a []any, at []string) {
	if n.MinItems != nil && len(a) < *n.MinItems {
		c.fail(failure{kind: failMinItems, at: at, got: len(a), want: *n.MinItems})
	}
	if n.Items == nil {
		return
	}
	for i, e := range a {
		c.value(n.Items, e, joinPath(at, strconv.Itoa(i)))
	}
}

// number checks the bounds. A number that cannot be compared exactly
// (1e9999999) is refused as out of range rather than guessed at: no bound
// in the schema is anywhere near such magnitudes.
func (c *checker) number(n *node, v json.Number, at []string) {
	if n.Minimum != nil {
		if d, ok := compareNumbers(v, *n.Minimum); !ok || d < 0 {
			c.fail(failure{kind: failMinimum, at: at})
			return
		}
	}
	if n.Maximum != nil {
		if d, ok := compareNumbers(v, *n.Maximum); !ok || d > 0 {
			c.fail(failure{kind: failMaximum, at: at})
		}
	}
}

func (c *checker) str(n *node, s string, at []string) {
	// JSON Schema counts length in code points, not bytes.
	if n.MinLength != nil && utf8.RuneCountInString(s) < *n.MinLength {
		c.fail(failure{kind: failMinLength, at: at})
	}
	if n.re != nil && !n.re().MatchString(s) {
		c.fail(failure{kind: failPattern, at: at})
	}
}

// hasType reports whether document value v is of JSON Schema type t.
func hasType(t string, v any) bool {
	switch v := v.(type) {
	case *object:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		// "integer" is a number with no fraction, however written:
		// 2.0 and 1e2 are integers to JSON Schema (checkGo refuses
		// them where a Go int cannot hold them).
		if t == "integer" {
			r, ok := rat(v)
			return ok && r.IsInt()
		}
		return t == "number"
	}
	return false
}

// equalScalar compares an enum entry (as encoding/json decodes the schema)
// with a document value. schema.json's enums hold strings only; numbers,
// booleans and null are compared too so a future enum of them is not
// silently refused.
func equalScalar(e, v any) bool {
	switch e := e.(type) {
	case string:
		s, ok := v.(string)
		return ok && s == e
	case bool:
		b, ok := v.(bool)
		return ok && b == e
	case nil:
		return v == nil
	case float64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		d, ok := compareNumbers(n, json.Number(strconv.FormatFloat(e, 'g', -1, 64)))
		return ok && d == 0
	}
	return false
}

// rat parses a JSON number exactly. It fails for exponents beyond about a
// million, which math/big refuses to expand.
func rat(n json.Number) (*big.Rat, bool) {
	return new(big.Rat).SetString(n.String())
}

// compareNumbers compares two JSON numbers exactly, so that 100.000000001
// is above a maximum of 100 however many digits it has. ok is false when
// either has an exponent too large for big.Rat (past about a million).
func compareNumbers(a, b json.Number) (cmp int, ok bool) {
	ra, okA := rat(a)
	rb, okB := rat(b)
	if !okA || !okB {
		return 0, false
	}
	return ra.Cmp(rb), true
}
