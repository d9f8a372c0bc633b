package fleet

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameWhatIsShared: docs/fleet.md's key table has a row for every
// kind of key this package writes, and neither it nor the README lists a
// shared thing as "not shared". Both said learned context windows were
// not shared after windows.go began sharing them.
func TestDocsNameWhatIsShared(t *testing.T) {
	kinds := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	kindRE := regexp.MustCompile(`\bkey\("([a-z]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range kindRE.FindAllSubmatch(b, -1) {
			kinds[string(m[1])] = true
		}
	}
	if !kinds["window"] || len(kinds) < 4 {
		t.Fatalf("key kinds found in the source: %v; the pattern no longer finds them", kinds)
	}
	docs := readDoc(t, "../docs/fleet.md")
	for kind := range kinds {
		if !strings.Contains(docs, "| `rally:"+kind+":") && !strings.Contains(docs, "| `rally:"+kind+"`") {
			t.Errorf("docs/fleet.md's key table has no row for rally:%s:…", kind)
		}
	}
	// What the docs list as not shared, and the README's sentence on it.
	_, notShared, _ := strings.Cut(docs, "## Not shared")
	notShared, _, _ = strings.Cut(notShared, "\n## ")
	readme := readDoc(t, "../README.md")
	i := strings.Index(readme, "What is not shared yet")
	if i < 0 {
		t.Fatal(`README.md has no "What is not shared yet" paragraph`)
	}
	sentence, _, _ := strings.Cut(readme[i:], "\n\n")
	for _, where := range []struct{ name, text string }{{"docs/fleet.md", notShared}, {"README.md", sentence}} {
		if strings.Contains(strings.ToLower(where.text), "context window") {
			t.Errorf("%s lists learned context windows as not shared, but windows.go shares them:\n%s", where.name, where.text)
		}
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
