package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// call runs t with args, which is a JSON string when it is a string and
// marshalled otherwise.
func call(tb testing.TB, t Tool, args any) (Result, error) {
	tb.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			tb.Fatal(err)
		}
		raw = string(b)
	}
	return t.Run(context.Background(), json.RawMessage(raw))
}

// textOf joins the text blocks of a result.
func textOf(r Result) string {
	m := llm.Message{Content: r.Content}
	return m.TextOf()
}

// errCase is a call that must fail with an error containing want.
type errCase struct {
	name string
	args any
	want string
}

func runErrCases(t *testing.T, tl Tool, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := call(t, tl, c.args)
			if err == nil {
				t.Fatalf("no error; result %q", textOf(res))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			prefix := tl.Spec().Name + ": "
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error %q lacks the %q prefix", err, prefix)
			}
		})
	}
}

func TestFunc(t *testing.T) {
	f := Func{
		Def: llm.Tool{Name: "echo", Description: "echo", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (Result, error) {
			return text(string(args)), nil
		},
	}
	var tl Tool = f
	if got := tl.Spec().Name; got != "echo" {
		t.Fatalf("name %q", got)
	}
	res, err := call(t, tl, `{"x":1}`)
	if err != nil || textOf(res) != `{"x":1}` {
		t.Fatalf("got %q, %v", textOf(res), err)
	}
	if _, err := (Func{Def: llm.Tool{Name: "nil"}}).Run(context.Background(), nil); err == nil {
		t.Fatal("nil Fn: no error")
	}
}

func TestBuiltin(t *testing.T) {
	tools := Builtin(t.TempDir())
	var names []string
	for _, tl := range tools {
		s := tl.Spec()
		names = append(names, s.Name)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if schema.Type != "object" || len(schema.Required) == 0 || s.Description == "" {
			t.Fatalf("%s: incomplete spec %+v", s.Name, schema)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Fatalf("%s: required %q is not a property", s.Name, r)
			}
		}
	}
	if got := strings.Join(names, ","); got != "read,write,edit,bash" {
		t.Fatalf("names %s", got)
	}
}

func TestDecode(t *testing.T) {
	type args struct {
		S *string  `json:"s"`
		N int      `json:"n"`
		F *float64 `json:"f"`
	}
	cases := []struct {
		name, in, want string
	}{
		{"invalid json", `{"s":`, `x: arguments are not valid JSON`},
		{"array", `[1]`, `x: arguments must be a JSON object, not array`},
		{"string field", `{"s":1}`, `x: "s" must be a string, not number`},
		{"int field", `{"n":"3"}`, `x: "n" must be an integer, not string`},
		{"int fraction", `{"n":1.5}`, `x: "n" must be an integer, not number 1.5`},
		{"number field", `{"f":true}`, `x: "f" must be a number, not bool`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a args
			err := decode("x", json.RawMessage(c.in), &a)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want prefix %q", err, c.want)
			}
		})
	}
	for _, in := range []string{"", "null", "  "} {
		var a args
		if err := decode("x", json.RawMessage(in), &a); err != nil || a.S != nil {
			t.Fatalf("%q: %v", in, err)
		}
	}
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	cases := []struct{ in, want string }{
		{"a.txt", filepath.Join(dir, "a.txt")},
		{"sub/../b.txt", filepath.Join(dir, "b.txt")},
		{"/etc/hosts", "/etc/hosts"},
		{"~", home},
		{"~/x/y", filepath.Join(home, "x/y")},
		{"~user", filepath.Join(dir, "~user")},
	}
	for _, c := range cases {
		got, err := resolve("t", dir, c.in)
		if err != nil || got != c.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := resolve("t", dir, " "); err == nil {
		t.Error("empty path: no error")
	}
	// Builtin tools use the same rules.
	if err := os.WriteFile(filepath.Join(home, "h.txt"), []byte("home"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, Read{Dir: dir}, map[string]any{"path": "~/h.txt"})
	if err != nil || textOf(res) != "home" {
		t.Fatalf("read ~/h.txt: %q, %v", textOf(res), err)
	}
}
