package llmtest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
		want []string
	}{
		{"", 0, nil},
		{"Hello brave  new\nworld", 0, []string{"Hello", " brave", "  new", "\nworld"}},
		{"  lead and trail ", 0, []string{"  lead", " and", " trail "}},
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcde", 2, []string{"ab", "cde"}},
		{"ab", 5, []string{"a", "b"}},
		{"héllo wörld 👋", 4, []string{"hél", "lo ", "wör", "ld 👋"}},
	} {
		got := split(c.text, c.n)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("split(%q, %d) = %q, want %q", c.text, c.n, got, c.want)
		}
		if strings.Join(got, "") != c.text {
			t.Errorf("split(%q, %d) loses text", c.text, c.n)
		}
	}
}

func TestCutAt(t *testing.T) {
	fs := []frame{{}, {delta: true}, {}, {delta: true}, {delta: true}, {}}
	for k, want := range map[int]int{0: 1, 1: 2, 2: 4, 3: 5, 9: 5} {
		if got := cutAt(fs, k); got != want {
			t.Errorf("cutAt(%d) = %d, want %d", k, got, want)
		}
	}
}

func TestEvents(t *testing.T) {
	raw := []byte("event: a\ndata: 1\n\ndata: 2\r\n\r\n: c\ndata: 3")
	fs := events(raw)
	var joined []byte
	for _, f := range fs {
		joined = append(joined, f.b...)
	}
	if len(fs) != 3 || !bytes.Equal(joined, raw) || string(fs[1].b) != "data: 2\r\n\r\n" {
		t.Errorf("events: %d frames, joined %q", len(fs), joined)
	}
}

func TestRedact(t *testing.T) {
	for key, want := range map[string]string{
		"":                               "",
		"short":                          "[redacted]",
		"sk-ant-api03-abcdefghijkl1234":  "sk-…1234",
		"AIzaSyA-abcdefghijklmnopqr5678": "AIz…5678",
	} {
		if got := redact(key); got != want {
			t.Errorf("redact(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestAPIOf(t *testing.T) {
	for path, want := range map[string]API{
		"/v1/chat/completions":                   OpenAICompletions,
		"/openai/deployments/x/chat/completions": OpenAICompletions,
		"/chat/completions":                      OpenAICompletions,
		"/v1/responses":                          OpenAIResponses,
		"/v1/messages":                           AnthropicMessages,
		"/anthropic/v1/messages":                 AnthropicMessages,
		"/v1beta/models/gemini-2.5-pro:streamGenerateContent": GoogleGenerativeAI,
		"/v1beta/models/gemini-2.5-pro:generateContent":       GoogleGenerativeAI,
		"/v1/models": "",
	} {
		if got := APIOf(path); got != want {
			t.Errorf("APIOf(%q) = %q, want %q", path, got, want)
		}
	}
}
