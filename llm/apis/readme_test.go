package apis_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm/apis"
)

// TestREADMEListsEveryAPI: the README's two lists of wire formats, the
// --api flag's row and the providers.NAME.api setting's row, name exactly
// the registry's APIs, so a new format that the README leaves out fails
// here by name.
func TestREADMEListsEveryAPI(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, row string // row: how the table row starts
		want      []string
	}{
		{"flag", "| `--api API`", apis.Networked()},
		{"setting", "| `providers.NAME.api` |", apis.Names()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := readmeRowNames(t, string(b), tt.row)
			for _, n := range tt.want {
				if !slices.Contains(got, n) {
					t.Errorf("README's row %s does not list %s", tt.row, n)
				}
			}
			for _, n := range got {
				if !slices.Contains(tt.want, n) {
					t.Errorf("README's row %s lists %s, which is no API here", tt.row, n)
				}
			}
		})
	}
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readmeRowNames returns the backticked words of the last cell of the one
// table row that starts with prefix.
func readmeRowNames(t *testing.T, readme, prefix string) []string {
	t.Helper()
	var rows []string
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, prefix) {
			rows = append(rows, l)
		}
	}
	if len(rows) != 1 {
		t.Fatalf("%d README rows start with %s, want one", len(rows), prefix)
	}
	cells := strings.Split(strings.Trim(rows[0], "| "), " | ")
	var names []string
	for _, m := range backticked.FindAllStringSubmatch(cells[len(cells)-1], -1) {
		names = append(names, m[1])
	}
	return names
}
