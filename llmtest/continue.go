package llmtest

import (
	"encoding/json"
	"strings"
)

// continueFinal serves vLLM's and SGLang's continue_final_message: a
// Chat Completions request whose last message is the assistant's partial
// answer, with continue_final_message true, gets only the rest of the
// step's answer (the text after the partial), the way a model goes on
// from a prefill; with Repeat the rest starts by saying the partial's
// last Repeat words again. A partial the answer does not start with gets
// the whole answer, as a model that ignored it would give.
func (x *exchange) continueFinal() {
	var b struct {
		Continue bool `json:"continue_final_message"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(x.body, &b) != nil || !b.Continue || len(b.Messages) == 0 {
		return
	}
	last := b.Messages[len(b.Messages)-1]
	var partial string
	if last.Role != "assistant" || json.Unmarshal(last.Content, &partial) != nil || partial == "" {
		return
	}
	text := x.st.Text
	if !x.st.says() {
		text = DefaultText
	}
	rest, ok := strings.CutPrefix(text, partial)
	if !ok {
		return
	}
	x.st.Text = lastWords(partial, x.st.Repeat) + rest
}

// lastWords is the end of s holding its last n words, with the white
// space before them.
func lastWords(s string, n int) string {
	if n <= 0 {
		return ""
	}
	ws := split(s, 0) // each word with the space before it
	return strings.Join(ws[max(len(ws)-n, 0):], "")
}
