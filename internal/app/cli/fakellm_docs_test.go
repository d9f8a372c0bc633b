package cli

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the shown output in docs/fake-llm.md from what the fake LLM answers")

// shellSplit splits a command the way sh would for the quoting the docs
// use: single and double quotes, and backslash-newline continuations.
func shellSplit(s string) ([]string, error) {
	s = strings.ReplaceAll(s, "\\\n", " ")
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// curl does what curl does with the flags the docs use (-s, -N, -H, -d,
// -X, -w with %{http_code}) and returns what it prints; any other flag
// fails the test, so the docs cannot use one this does not check.
func curl(t *testing.T, args []string, base string) string {
	t.Helper()
	method, url, body, format := "GET", "", "", ""
	hdr := http.Header{}
	for i := 0; i < len(args); i++ {
		next := func() string {
			i++
			if i >= len(args) {
				t.Fatalf("curl: %s needs a value", args[i-1])
			}
			return args[i]
		}
		switch a := args[i]; a {
		case "-s", "-N", "-sN":
		case "-H":
			k, v, _ := strings.Cut(next(), ":")
			hdr.Add(k, strings.TrimSpace(v))
		case "-d":
			body, method = next(), "POST"
			if hdr.Get("Content-Type") == "" {
				hdr.Set("Content-Type", "application/x-www-form-urlencoded") // as curl does
			}
		case "-X":
			method = next()
		case "-w":
			format = next()
		default:
			if strings.HasPrefix(a, "-") {
				t.Fatalf("curl: flag %s is not supported by this test", a)
			}
			url = a
		}
	}
	const docBase = "http://127.0.0.1:8080"
	if !strings.HasPrefix(url, docBase) {
		t.Fatalf("curl: URL %q is not under %s", url, docBase)
	}
	req, err := http.NewRequest(method, base+strings.TrimPrefix(url, docBase), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if format != "" {
		format = strings.ReplaceAll(format, `\n`, "\n")
		out += strings.ReplaceAll(format, "%{http_code}", fmt.Sprint(resp.StatusCode))
	}
	return out
}

// timestamps are the only values that change between runs.
var timestamps = regexp.MustCompile(`("created(?:_at)?": ?)\d+`)

// TestFakeLLMDocs runs every example of docs/fake-llm.md: a `rally
// fake-llm` block starts the server (on a free port instead of 8080), and
// each curl block is sent to it and must print what the block after it
// shows.
func TestFakeLLMDocs(t *testing.T) {
	const path = "../../../docs/fake-llm.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	blocks := mdfence.Blocks(string(data))
	base, stop := "", func() error { return nil }
	defer func() { stop() }()
	ran := 0
	type edit struct {
		b   mdfence.Block
		out string
	}
	var edits []edit
	for i, b := range blocks {
		if b.Lang != "sh" {
			continue
		}
		first := b.Open + 1
		cmd := strings.TrimSpace(strings.Split(b.Text(), "# ")[0])
		switch {
		case strings.HasPrefix(cmd, "rally fake-llm "):
			args, err := shellSplit(strings.TrimPrefix(cmd, "rally fake-llm "))
			if err != nil {
				t.Fatal(err)
			}
			for j, a := range args {
				if a == "127.0.0.1:8080" {
					args[j] = "127.0.0.1:0"
				}
			}
			if args[0] != "--listen" || args[1] != "127.0.0.1:0" {
				continue // not a server the examples talk to
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			base, _, stop = startFakeLLM(t, args...)
		case strings.HasPrefix(cmd, "curl "):
			if base == "" {
				t.Fatalf("%s:%d: a curl example before any rally fake-llm --listen 127.0.0.1:8080", path, first)
			}
			if i+1 >= len(blocks) {
				t.Fatalf("%s:%d: no output shown after the example", path, first)
			}
			args, err := shellSplit(strings.TrimPrefix(cmd, "curl "))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSuffix(curl(t, args, base), "\n")
			want := blocks[i+1]
			ran++
			if *updateDocs {
				edits = append(edits, edit{want, got})
				continue
			}
			norm := func(s string) string { return timestamps.ReplaceAllString(s, "${1}0") }
			if shown := strings.Join(want.Lines, "\n"); norm(got) != norm(shown) {
				t.Errorf("%s:%d: curl %s\nprinted:\n%s\nthe docs show:\n%s", path, first+1, strings.Join(args, " "), got, shown)
			}
		}
	}
	if ran < 8 {
		t.Errorf("ran %d curl examples; the docs have lost theirs", ran)
	}
	if *updateDocs {
		for k := len(edits) - 1; k >= 0; k-- {
			e := edits[k]
			lines = append(lines[:e.b.Open+1], append(strings.Split(e.out, "\n"), lines[e.b.Open+1+len(e.b.Lines):]...)...)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
