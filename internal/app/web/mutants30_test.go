package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestHooksCodeOnlyForAChangeOfHooks: the one-time code is asked for when
// a save changes the hooks' value, never for the way they are written. A
// file whose hooks were typed by hand on one line with tabs, saved with
// another setting changed, or with the hooks box sent back re-indented
// with a browser's CRLF line ends, goes through without a code and with
// none printed. Bug caught: the gate compares the file's text rather than
// its hooks, so every save of a file that has hooks asks for a code.
func TestHooksCodeOnlyForAChangeOfHooks(t *testing.T) {
	const byHand = "{\n\t\"hooks\": [{\"on\":[\"agent_end\"],\t\"command\":[\"true\"]}]\n}\n"
	const reindented = "[\r\n    {\r\n        \"on\": [ \"agent_end\" ],\r\n        \"command\": [ \"true\" ]\r\n    }\r\n]\r\n"
	tests := []struct {
		name  string
		form  map[string]string
		asked bool
	}{
		{"another setting", map[string]string{"retry.maxRetries": "7"}, false},
		{"the hooks box re-indented", map[string]string{"hooks": reindented, "retry.maxRetries": "8"}, false},
		{"the hooks changed", map[string]string{"hooks": `[{"on":["agent_end"],"command":["false"]}]`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term := &proctest.Buffer{}
			e := newEnvWith(t, Config{Token: "test-token-0123456789", Terminal: term})
			global := e.src.Global.Path
			writeFile(t, global, byHand)
			form := e.load(t, "global")
			for k, v := range tt.form {
				form.Set(k, v)
			}
			code, _ := e.post(t, form, nil)
			printed := codeRe.MatchString(term.String())
			if tt.asked {
				if code != http.StatusForbidden || !printed || readFile(t, global) != byHand {
					t.Fatalf("a change of hooks: %d, code printed %v, file:\n%s", code, printed, readFile(t, global))
				}
				return
			}
			if code != http.StatusSeeOther || printed {
				t.Fatalf("hooks left as they were: %d, code printed %v (%q)", code, printed, term.String())
			}
			got := readFile(t, global)
			if !strings.Contains(got, `"maxRetries": `+tt.form["retry.maxRetries"]) || !strings.Contains(got, `"true"`) {
				t.Fatalf("saved file:\n%s", got)
			}
		})
	}
}
