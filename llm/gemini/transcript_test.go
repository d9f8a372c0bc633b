package gemini

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

// replay serves path and collects the answer, or the error of Stream.
func replay(t *testing.T, path string, status int) (*llm.Message, error) {
	t.Helper()
	c := client(api.ServeFile(t, path, status))
	st, err := c.Stream(t.Context(), ask("hi"))
	if err != nil {
		return nil, err
	}
	return llm.Collect(st)
}

const longSig = "CiIBVKhc7vB+vaaq6rA/KC79Ts7iXagIOA4EBOyBFDpl+"

func TestTranscripts(t *testing.T) {
	tokens := providertest.Tokens
	tests := []struct {
		file string
		want providertest.Want
	}{
		{"firebase-basic-reply-short.sse", providertest.Want{Text: "The capital of Wyoming is **Cheyenne**.\n", Stop: llm.Stop, Usage: tokens(7, 10)}},
		{"firebase-thinking-function-call.sse", providertest.Want{
			Thinking: "**Calculating the Days**\n\nI've determined the user's request involves calculating the days until New Year's Eve. I need to get the current date and the date of New Year's Eve. My plan involves using `default_api.now()` to get the current date and time. Then, I can perform the calculation to find the time difference.\n\n\n" +
				"**Determining the Approach**\n\nI'm now zeroing in on the best method. Having established the core requirement -- the number of days until New Year's Eve -- I've identified `default_api.now()` as my primary tool for retrieving the current date. I'll need to define December 31st of the current year. I've also recognized the need to calculate the difference, which isn't a direct function. I'll calculate this myself after getting today's date.\n\n\n",
			Calls: []providertest.Call{{Name: "now", Args: `{}`}},
			Stop:  llm.ToolUse, Usage: tokens(38, 6+168)}},
		{"firebase-thinking-reply.sse", providertest.Want{
			Thinking: "**Exploring Sky Color**\n\nI've zeroed in on the core question: why does the sky appear blue? My thought process has taken shape, highlighting sunlight's composition, the atmospheric role, and the significance of scattering. Specifically, I'm focusing on Rayleigh scattering and how the wavelengths of light interact. My next step will be to explain this.\n\n\n" +
				"**Refining the Explanation**\n\nI'm now in the process of formulating a clear and concise explanation. The initial draft is complete and it explains why the sky appears blue by referencing how sunlight is scattered by Earth's atmosphere. I'm focusing on the significance of the shorter wavelengths of blue light, ensuring a comprehensive understanding is conveyed. The current plan is to finalize the explanation.\n\n\n" +
				"**Constructing a Concise Answer**\n\nI've formulated a succinct explanation for why the sky is blue. Sunlight contains all colors. Tiny gas molecules in the atmosphere scatter sunlight. Blue light has shorter wavelengths, scattering more efficiently. This dispersed blue light fills the sky, making it appear blue to us. I'm satisfied with this concise response.\n\n\n",
			Text: "The sky is blue because tiny gas molecules in Earth's atmosphere scatter blue light from the sun more efficiently than other colors. Blue light has shorter, smaller wavelengths, causing it to be scattered in all directions, making the sky appear blue to our eyes.",
			Stop: llm.Stop, Usage: tokens(10, 48+540)}},
		{"firebase-recitation.sse", providertest.Want{Text: "text1text2text3text4text5text6text7text8", Stop: llm.Error, Usage: tokens(9, 261),
			ErrHas: "finish reason RECITATION", Class: retry.Fatal}},
		{"firebase-prompt-blocked.sse", providertest.Want{Text: "text1text2text3", Stop: llm.Error, Usage: tokens(7, 0),
			ErrHas: "prompt was blocked (block reason SAFETY)", Class: retry.Fatal}},
		{"firebase-no-content-parts.sse", providertest.Want{
			Text: "I will generate a 3D rendering of a whimsical scene featuring a pink pig wearing a distinguished grey top hat and large, feathery white wings soaring through the air. Below, a vibrant, clean, and modern futuristic city will be visible, characterized by sleek, rounded buildings, elevated walkways, and an abundance of lush green trees and parks integrated throughout the cityscape under a bright, slightly cloudy sky.\n\n",
			Stop: llm.Stop, Usage: tokens(34, 1370)}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := replay(t, filepath.Join("testdata", tt.file), http.StatusOK)
			providertest.Check(t, m, err, tt.want)
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
	refs := providertest.References(t, func(r *providertest.Reference) bool {
		return r.Provider == "google-gemini" || r.Provider == "google-vertex"
	})
	for _, r := range refs {
		t.Run(r.File, func(t *testing.T) {
			x := r.Expected
			w := providertest.Want{Text: x.Text, Thinking: x.Reasoning, Stop: llm.Stop}
			for _, c := range x.ToolCalls {
				w.Calls = append(w.Calls, providertest.Call{ID: c.ID, Name: c.Name, Args: c.Args})
			}
			if len(w.Calls) > 0 {
				w.Stop = llm.ToolUse
			}
			if x.StopReason != nil && *x.StopReason == "MAX_TOKENS" {
				w.Stop = llm.Length
			}
			if u := x.Usage; u != nil {
				w.Usage = providertest.Tokens(u.Input, u.Output+u.Reasoning)
			}
			if e := x.Error; e != nil {
				w.HTTPErr, w.ErrCode, w.ErrHas = true, e.Type, e.Message
				w.Class = retry.Fatal
				if r.Status >= 500 || r.Status == 429 {
					w.Class = retry.Transient
				}
			}
			m, err := replay(t, r.Path(), r.Status)
			providertest.Check(t, m, err, w)
		})
	}
}
