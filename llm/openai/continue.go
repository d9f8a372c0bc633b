package openai

import (
	"context"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// continuable streams a Chat Completions call that a drop can continue
// (ClientOptions.Resume), for servers with continue_final_message (vLLM,
// SGLang): after a drop, the conversation is sent again with the partial
// answer as the last assistant message and continue_final_message set, and
// what the model says next is appended to the same message. Only a plain
// text answer is continued: a message with thinking (which prefill breaks,
// and providers refuse), or with a tool call (whose arguments a model
// cannot be trusted to resume), fails as before, and the session restarts
// it. The model may say the last words of the partial again at the seam:
// the seam cuts them (see seam), so no text shows twice.
func (c *Completions) continuable(ctx context.Context, cn *httpcall.Call, req *llm.Request) (*llm.Stream, error) {
	return cn.StreamConn(ctx, req, c.request(req, cn.URL), func(conn *httpcall.Conn, m *llm.Model) func(*llm.Builder) error {
		p := &chatParser{Call: cn, model: m, dec: conn.Dec}
		return func(b *llm.Builder) error {
			err := p.fill(b)
			if err == nil || b.Done() || effort(req) != "" || !conn.Broke(ctx, err) {
				return err
			}
			partial, ok := textOnly(b.Message())
			if !ok {
				return err
			}
			if err == io.EOF {
				err = llm.Truncated(cn.Provider)
			}
			return llm.NewDrop(err, llm.ResumeContinuation, "", func(rctx context.Context) error {
				body := c.continuation(req, cn.URL, partial)
				err := conn.Reconnect(func() (*httpcall.Response, error) {
					return httpcall.Post(rctx, &cn.Options, cn.URL, cn.Header, body, req.Attempt, cn.APIErr)
				})
				if err == nil {
					p.dec, p.finish, p.seam = conn.Dec, "", newSeam(partial)
				}
				return err
			})
		}
	})
}

// textOnly is the text of a partial answer made of text alone, and
// whether it is one (some text, no thinking, no tool call).
func textOnly(m *llm.Message) (string, bool) {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type != llm.TextType {
			return "", false
		}
		b.WriteString(c.Text)
	}
	return b.String(), b.Len() > 0
}

// continuation is the request that continues partial: the same
// conversation with the partial answer as its last assistant message.
func (c *Completions) continuation(req *llm.Request, endpoint, partial string) *chatRequest {
	r := *req
	r.Messages = append(append([]llm.Message(nil), req.Messages...), llm.Message{
		Role: llm.Assistant, Content: []llm.Content{llm.Text(partial)}, StopReason: llm.Stop,
		API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
	})
	body := c.request(&r, endpoint)
	no := false
	body.ContinueFinalMessage, body.AddGenerationPrompt = true, &no
	return body
}

// Seam sizes: how much of the partial's end a continuation is compared
// with, and the shortest repeat that is cut. A shorter overlap ("the" at
// the end and "the" again) may be what the model meant to say.
const (
	seamWindow = 256
	seamMin    = 8
)

// seam cuts from the start of a continuation the words it repeats from
// the end of the partial answer. It holds the continuation's text back
// while it could still be such a repeat (it occurs in the partial's end),
// then lets it through without the longest repeat.
type seam struct {
	tail    string // the end of the partial answer
	pending strings.Builder
	done    bool
}

func newSeam(partial string) *seam {
	tail := partial
	if len(tail) > seamWindow {
		i := len(tail) - seamWindow
		for i < len(tail) && !utf8.RuneStart(tail[i]) {
			i++
		}
		tail = tail[i:]
	}
	return &seam{tail: tail}
}

// take is the text of delta that can be shown now; nil passes it through.
func (s *seam) take(delta string) string {
	if s == nil || s.done {
		return delta
	}
	s.pending.WriteString(delta)
	if strings.Contains(s.tail, s.pending.String()) {
		return "" // may still be a repeat: wait for more
	}
	return s.flush()
}

// flush decides with what was held back and returns what to show.
func (s *seam) flush() string {
	if s == nil || s.done {
		return ""
	}
	s.done = true
	text := s.pending.String()
	for k := min(len(text), len(s.tail)); k >= seamMin; k-- {
		if strings.HasSuffix(s.tail, text[:k]) && wordStart(s.tail, len(s.tail)-k, text[:k]) {
			return text[k:]
		}
	}
	return text
}

// wordStart reports that the repeat, at byte i of tail, starts a word:
// it begins with a space or follows one.
func wordStart(tail string, i int, repeat string) bool {
	r, _ := utf8.DecodeRuneInString(repeat)
	if unicode.IsSpace(r) || i == 0 {
		return true
	}
	before, _ := utf8.DecodeLastRuneInString(tail[:i])
	return unicode.IsSpace(before)
}
