package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestReadme runs the program and checks that the README's "Using rally
// from Go" section shows it verbatim, and its output as it really is.
func TestReadme(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program := string(src[strings.Index(string(src), "package main"):])
	if !strings.Contains(string(readme), "```go\n"+program+"```\n") {
		t.Errorf("README.md does not show examples/hello/main.go (from package main on) as a go block")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	main()
	os.Stdout = stdout
	w.Close()
	got := <-out
	if got == "" || !strings.Contains(string(readme), "```text\n"+got+"```\n") {
		t.Errorf("README.md does not show the program's output:\n%s", got)
	}
}
