package cli

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
)

// constStrings returns the string constants of a Go file whose names
// start with prefix and, when typ is not "", whose declared type is typ.
func constStrings(t *testing.T, path, prefix, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, _ := vs.Type.(*ast.Ident); typ != "" && (id == nil || id.Name != typ) {
				continue
			}
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestRPCDocs keeps docs/rpc.md complete: every command of package rpc and
// every event type of packages agent and session has a section with an
// example line
// (a command's response included), and every example line that is not cut
// short with "…" is valid JSON.
func TestRPCDocs(t *testing.T) {
	const path = "../../../docs/rpc.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var lines []string
	for _, b := range mdfence.Blocks(doc) {
		if b.Lang != "json" {
			continue
		}
		for _, l := range b.Lines {
			lines = append(lines, l)
			if !strings.Contains(l, "…") && !json.Valid([]byte(l)) {
				t.Errorf("%s: example line is not JSON: %s", path, l)
			}
		}
	}
	has := func(sub string) bool {
		for _, l := range lines {
			if strings.Contains(l, sub) {
				return true
			}
		}
		return false
	}
	section := func(name string) bool {
		return strings.Contains(doc, "\n### `"+name+"`") || strings.Contains(doc, "\n### `"+name+" ")
	}
	cmds := constStrings(t, "../../../rpc/protocol.go", "Cmd", "")
	// session's own events; it re-exports agent's, whose values are
	// conversions rather than literals.
	events := append(constStrings(t, "../../../agent/event.go", "", "EventType"), constStrings(t, "../../../session/event.go", "", "EventType")...)
	if len(cmds) < 16 || len(events) < 16 {
		t.Fatalf("found %d commands and %d events in the sources", len(cmds), len(events))
	}
	for _, c := range cmds {
		if c == "parse" {
			continue
		}
		// extension_ui_response gets no response line, as in pi.
		answered := c != "extension_ui_response"
		if !section(c) || !has(`"type":"`+c+`"`) || (answered && !has(`"command":"`+c+`"`)) {
			t.Errorf("%s: command %s needs a section with an example command line and its response", path, c)
		}
	}
	for _, e := range events {
		if !section(e) || !has(`"type":"`+e+`"`) {
			t.Errorf("%s: event %s needs a section with an example line", path, e)
		}
	}
}
