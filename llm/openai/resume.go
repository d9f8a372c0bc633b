package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// background streams the call in the Responses API's background mode
// (ClientOptions.Resume): the response is created with background and
// store set, so it goes on being generated, and stays readable, when the
// connection breaks. Every event carries a sequence_number; after a drop
// the stream fails with an *llm.Drop whose Reconnect reads
// GET /responses/{id}?stream=true&starting_after=N, the events after the
// last one seen, into the same message. Nothing is generated twice and a
// tool call's arguments go on where they stopped.
//
// The cost, why it is opt-in: the provider stores the response (about
// ten minutes), which zero data retention forbids, and the first token
// comes later than in a plain stream.
func (c *Responses) background(ctx context.Context, cn *httpcall.Call, req *llm.Request) (*llm.Stream, error) {
	body := respBody(req)
	body.Background, body.Store = true, true
	return cn.StreamConn(ctx, req, body, func(conn *httpcall.Conn, m *llm.Model) func(*llm.Builder) error {
		p := &respParser{Call: cn, model: m, dec: conn.Dec, cursor: &cursor{seq: -1}}
		cancelled := false
		return func(b *llm.Builder) error {
			err := p.fill(b)
			if err != nil && ctx.Err() != nil && p.cursor.id != "" && !cancelled {
				// Aborted: the stored response would go on being generated
				// (and billed) without anyone to read it.
				cancelled = true
				go cancelBackground(cn, p.cursor.id)
			}
			if err == nil || b.Done() || p.cursor.id == "" || !conn.Broke(ctx, err) {
				return err
			}
			if err == io.EOF {
				err = llm.Truncated(cn.Provider)
			}
			return llm.NewDrop(err, llm.ResumeCursor, strconv.Itoa(p.cursor.seq), func(rctx context.Context) error {
				u := cn.Base + "/responses/" + url.PathEscape(p.cursor.id) + "?stream=true&starting_after=" + strconv.Itoa(p.cursor.seq)
				err := conn.Reconnect(func() (*httpcall.Response, error) {
					return httpcall.Get(rctx, &cn.Options, u, cn.Header, req.Attempt, cn.APIErr)
				})
				if err == nil {
					p.dec = conn.Dec
				}
				return err
			})
		}
	})
}

// cancelTimeout bounds the best-effort cancel of an aborted background
// response; the abort itself never waits for it.
const cancelTimeout = 5 * time.Second

// cancelBackground asks the provider to stop generating response id
// (POST /responses/{id}/cancel). It runs off the aborted call's path and
// its failure changes nothing: at worst the response runs to its end.
func cancelBackground(cn *httpcall.Call, id string) {
	ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
	defer stop()
	u := cn.Base + "/responses/" + url.PathEscape(id) + "/cancel"
	if resp, err := httpcall.Post(ctx, &cn.Options, u, cn.Header, struct{}{}, 0, cn.APIErr); err == nil {
		resp.Close()
	}
}

// cursor is where a background response stands: its id (from
// response.created) and the sequence number of the last event read.
type cursor struct {
	id  string
	seq int
}

var seqField = []byte(`"sequence_number":`)

// see reads the cursor fields of one event. A quote inside a JSON string
// is always escaped, so the field's name cannot be matched inside text.
func (c *cursor) see(name string, data []byte) {
	if i := bytes.LastIndex(data, seqField); i >= 0 {
		rest := bytes.TrimLeft(data[i+len(seqField):], " ")
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(string(rest[:j])); err == nil && n > c.seq {
			c.seq = n
		}
	}
	if c.id == "" && (name == "response.created" || name == "") && bytes.Contains(data, []byte(`"response.created"`)) {
		var e struct {
			Response struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		if json.Unmarshal(data, &e) == nil {
			c.id = e.Response.ID
		}
	}
}
