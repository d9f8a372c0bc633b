package openai

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// referenceDir holds a shared corpus of real transcripts with expected
// values, present on some development machines only. It is read in place
// and never copied into the project.
const referenceDir = "/work/shared/reference-wire"

type referenceCase struct {
	File     string `json:"file"`
	API      string `json:"api"`
	Expected struct {
		Text      string `json:"text"`
		Reasoning string `json:"reasoning"`
		ToolCalls []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			Args string `json:"arguments_json"`
		} `json:"tool_calls"`
		StopReason *string `json:"stop_reason"`
		Usage      *struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
			Total  int `json:"total_tokens"`
			Cached int `json:"cached_input_tokens"`
		} `json:"usage"`
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
	} `json:"expected"`
}

func TestReferenceCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join(referenceDir, "index.jsonl"))
	if err != nil {
		t.Skip("reference corpus not present")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rc referenceCase
		if err := json.Unmarshal(sc.Bytes(), &rc); err != nil {
			t.Fatal(err)
		}
		var api string
		switch {
		case strings.HasPrefix(rc.API, "chat.completions"):
			api = "completions"
		case rc.API == "responses":
			api = "responses"
		default:
			continue
		}
		t.Run(rc.File, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(referenceDir, rc.File))
			if err != nil {
				t.Fatal(err)
			}
			msg, err := run(t, provider(api, serveBytes(t, body).URL), request(llm.Model{ID: "m"}))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			x := rc.Expected
			w := want{text: x.Text, thinking: x.Reasoning, stop: refStop(x.StopReason, len(x.ToolCalls) > 0)}
			for _, c := range x.ToolCalls {
				w.calls = append(w.calls, wantCall{c.ID, c.Name, c.Args})
			}
			if u := x.Usage; u != nil {
				w.usage = &llm.Usage{Input: u.Input - u.Cached, Output: u.Output, CacheRead: u.Cached, TotalTokens: u.Total}
			}
			if x.Error != nil {
				w.errSub = x.Error.Type
				w.stop = llm.Error
			}
			// A stream that died before its terminal event fails, even if
			// the corpus names no error.
			if x.StopReason == nil && x.Error == nil {
				w.errSub = "truncated"
			}
			check(t, msg, err, w)
		})
	}
}

// refStop maps the corpus's provider-native terminal value.
func refStop(native *string, calls bool) llm.StopReason {
	if native == nil {
		return llm.Error
	}
	switch *native {
	case "length":
		return llm.Length
	case "failed":
		return llm.Error
	}
	if calls {
		return llm.ToolUse
	}
	return llm.Stop
}
