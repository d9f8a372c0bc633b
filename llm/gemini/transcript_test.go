package gemini

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// call is an expected function call; ID "" accepts a made-up id, and Args
// is compared as JSON values.
type fcall struct{ ID, Name, Args, Sig string }

type want struct {
	text, thinking string
	calls          []fcall
	stop           llm.StopReason
	usage          *llm.Usage // Input, Output, CacheRead only
	httpErr        bool       // Stream itself fails
	errCode        string     // for an *llm.APIError
	errHas         string
	class          retry.Class
}

func serveFile(t *testing.T, path string, status int) *server {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
		w.WriteHeader(status)
		w.Write(body)
	})
}

// replay serves path and collects the answer, or the error of Stream.
func replay(t *testing.T, path string, status int) (*llm.Message, error) {
	t.Helper()
	c := client(serveFile(t, path, status))
	st, err := c.Stream(t.Context(), ask("hi"))
	if err != nil {
		return nil, err
	}
	return llm.Collect(st)
}

func check(t *testing.T, m *llm.Message, err error, w want) {
	t.Helper()
	if w.errHas != "" || w.errCode != "" {
		if err == nil {
			t.Fatal("no error")
		}
		if e, ok := llm.AsAPIError(err); w.errCode != "" && (!ok || e.Code != w.errCode) {
			t.Errorf("error %#v, want code %q", err, w.errCode)
		}
		if !strings.Contains(err.Error(), w.errHas) {
			t.Errorf("error %q lacks %q", err, w.errHas)
		}
		if c := llm.Classify(err).Class; c != w.class {
			t.Errorf("classified %v, want %v", c, w.class)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if w.httpErr {
		if m != nil {
			t.Errorf("a stream from an HTTP error: %+v", m)
		}
		return
	}
	if m.StopReason != w.stop {
		t.Errorf("stop %q, want %q", m.StopReason, w.stop)
	}
	if got := m.TextOf(); got != w.text {
		t.Errorf("text %q, want %q", got, w.text)
	}
	var thinking string
	for _, c := range m.Content {
		if c.Type == llm.ThinkingType {
			thinking += c.Thinking
		}
	}
	if thinking != w.thinking {
		t.Errorf("thinking %q, want %q", thinking, w.thinking)
	}
	calls := m.ToolCalls()
	if len(calls) != len(w.calls) {
		t.Fatalf("calls %+v, want %+v", calls, w.calls)
	}
	for i, c := range w.calls {
		got := calls[i]
		if got.ID == "" || (c.ID != "" && got.ID != c.ID) || got.Name != c.Name || !sameJSON(string(got.Arguments), c.Args) ||
			(c.Sig != "" && got.ThoughtSignature != c.Sig) {
			t.Errorf("call %d = %+v, want %+v", i, got, c)
		}
	}
	switch {
	case w.usage == nil && m.Usage != nil:
		t.Errorf("usage %+v, want none", m.Usage)
	case w.usage != nil && m.Usage == nil:
		t.Errorf("no usage, want %+v", *w.usage)
	case w.usage != nil:
		if u := m.Usage; u.Input != w.usage.Input || u.Output != w.usage.Output || u.CacheRead != w.usage.CacheRead {
			t.Errorf("usage %+v, want %+v", *u, *w.usage)
		}
	}
}

func tokens(in, out int) *llm.Usage { return &llm.Usage{Input: in, Output: out} }

const longSig = "CiIBVKhc7vB+vaaq6rA/KC79Ts7iXagIOA4EBOyBFDpl+"

func TestTranscripts(t *testing.T) {
	tests := []struct {
		file string
		want want
	}{
		{"firebase-basic-reply-short.sse", want{text: "The capital of Wyoming is **Cheyenne**.\n", stop: llm.Stop, usage: tokens(7, 10)}},
		{"firebase-thinking-function-call.sse", want{
			thinking: "**Calculating the Days**\n\nI've determined the user's request involves calculating the days until New Year's Eve. I need to get the current date and the date of New Year's Eve. My plan involves using `default_api.now()` to get the current date and time. Then, I can perform the calculation to find the time difference.\n\n\n" +
				"**Determining the Approach**\n\nI'm now zeroing in on the best method. Having established the core requirement -- the number of days until New Year's Eve -- I've identified `default_api.now()` as my primary tool for retrieving the current date. I'll need to define December 31st of the current year. I've also recognized the need to calculate the difference, which isn't a direct function. I'll calculate this myself after getting today's date.\n\n\n",
			calls: []fcall{{"", "now", `{}`, ""}},
			stop:  llm.ToolUse, usage: tokens(38, 6+168)}},
		{"firebase-thinking-reply.sse", want{
			thinking: "**Exploring Sky Color**\n\nI've zeroed in on the core question: why does the sky appear blue? My thought process has taken shape, highlighting sunlight's composition, the atmospheric role, and the significance of scattering. Specifically, I'm focusing on Rayleigh scattering and how the wavelengths of light interact. My next step will be to explain this.\n\n\n" +
				"**Refining the Explanation**\n\nI'm now in the process of formulating a clear and concise explanation. The initial draft is complete and it explains why the sky appears blue by referencing how sunlight is scattered by Earth's atmosphere. I'm focusing on the significance of the shorter wavelengths of blue light, ensuring a comprehensive understanding is conveyed. The current plan is to finalize the explanation.\n\n\n" +
				"**Constructing a Concise Answer**\n\nI've formulated a succinct explanation for why the sky is blue. Sunlight contains all colors. Tiny gas molecules in the atmosphere scatter sunlight. Blue light has shorter wavelengths, scattering more efficiently. This dispersed blue light fills the sky, making it appear blue to us. I'm satisfied with this concise response.\n\n\n",
			text: "The sky is blue because tiny gas molecules in Earth's atmosphere scatter blue light from the sun more efficiently than other colors. Blue light has shorter, smaller wavelengths, causing it to be scattered in all directions, making the sky appear blue to our eyes.",
			stop: llm.Stop, usage: tokens(10, 48+540)}},
		{"firebase-recitation.sse", want{text: "text1text2text3text4text5text6text7text8", stop: llm.Error, usage: tokens(9, 261),
			errHas: "finish reason RECITATION", class: retry.Fatal}},
		{"firebase-prompt-blocked.sse", want{text: "text1text2text3", stop: llm.Error, usage: tokens(7, 0),
			errHas: "prompt was blocked (block reason SAFETY)", class: retry.Fatal}},
		{"firebase-no-content-parts.sse", want{
			text: "I will generate a 3D rendering of a whimsical scene featuring a pink pig wearing a distinguished grey top hat and large, feathery white wings soaring through the air. Below, a vibrant, clean, and modern futuristic city will be visible, characterized by sleek, rounded buildings, elevated walkways, and an abundance of lush green trees and parks integrated throughout the cityscape under a bright, slightly cloudy sky.\n\n",
			stop: llm.Stop, usage: tokens(34, 1370)}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := replay(t, filepath.Join("testdata", tt.file), http.StatusOK)
			check(t, m, err, tt.want)
		})
	}
	t.Run("signature kept", func(t *testing.T) {
		m, _ := replay(t, filepath.Join("testdata", "firebase-thinking-function-call.sse"), http.StatusOK)
		if sig := m.ToolCalls()[0].ThoughtSignature; !strings.HasPrefix(sig, longSig) || len(sig) != 1140 {
			t.Errorf("signature %q (%d bytes)", sig, len(sig))
		}
	})
}

// TestReferenceWire replays the shared reference captures, when this
// machine has them, against their recorded expectations.
func TestReferenceWire(t *testing.T) {
	const dir = "/work/shared/reference-wire"
	f, err := os.Open(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		t.Skip("no reference captures here")
	}
	defer f.Close()
	type ref struct {
		File     string `json:"file"`
		Provider string `json:"provider"`
		Status   int    `json:"http_status"`
		Expected struct {
			Text      string `json:"text"`
			Reasoning string `json:"reasoning"`
			ToolCalls []struct {
				ID   *string `json:"id"`
				Name string  `json:"name"`
				Args string  `json:"arguments_json"`
			} `json:"tool_calls"`
			StopReason *string `json:"stop_reason"`
			Usage      *struct {
				Input     int `json:"input_tokens"`
				Output    int `json:"output_tokens"`
				Reasoning int `json:"reasoning_tokens"`
			} `json:"usage"`
			Error *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"expected"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ref
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Provider != "google-gemini" && r.Provider != "google-vertex" {
			continue
		}
		t.Run(r.File, func(t *testing.T) {
			x := r.Expected
			w := want{text: x.Text, thinking: x.Reasoning, stop: llm.Stop}
			for _, c := range x.ToolCalls {
				id := ""
				if c.ID != nil {
					id = *c.ID
				}
				w.calls = append(w.calls, fcall{id, c.Name, c.Args, ""})
			}
			if len(w.calls) > 0 {
				w.stop = llm.ToolUse
			}
			if x.StopReason != nil && *x.StopReason == "MAX_TOKENS" {
				w.stop = llm.Length
			}
			if u := x.Usage; u != nil {
				w.usage = tokens(u.Input, u.Output+u.Reasoning)
			}
			if e := x.Error; e != nil {
				w.httpErr, w.errCode, w.errHas = true, e.Type, e.Message
				w.class = retry.Fatal
				if r.Status >= 500 || r.Status == 429 {
					w.class = retry.Transient
				}
			}
			m, err := replay(t, filepath.Join(dir, r.File), r.Status)
			check(t, m, err, w)
		})
	}
}
