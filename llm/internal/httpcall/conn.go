package httpcall

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
)

// Conn is the connection a resumable stream reads: the response to the
// first request, then to each reconnect (Reconnect). The cap on the
// response's size spans them all, as they are one message.
type Conn struct {
	call   *Call
	resp   *Response
	body   watchBody
	capped *cappedBody
	// Dec reads the current connection; Reconnect replaces it, so a
	// parser reads Dec afresh for every event.
	Dec *sse.Decoder
}

// watchBody remembers how the connection under it failed, so a drop (the
// transport's failure) is told from what the server said.
type watchBody struct {
	r   io.Reader
	err error
}

func (w *watchBody) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// Broke reports that a fill failed with err because the connection broke
// (it ended before the terminal event, was reset, or went idle) rather
// than for what the server sent or the caller's cancellation: a stream a
// provider may be able to continue.
func (c *Conn) Broke(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrMessageTooLarge) || errors.Is(err, llm.ErrEventTooLarge) {
		return false
	}
	return err == io.EOF || (c.body.err != nil && c.body.err != io.EOF)
}

// Reconnect closes the current connection and reads the response open
// returns from now on (a GET of the stored response, or a new POST).
func (c *Conn) Reconnect(open func() (*Response, error)) error {
	c.resp.Close()
	resp, err := open()
	if err != nil {
		if _, ok := llm.AsAPIError(err); ok {
			return err
		}
		return c.call.Errorf("reconnect: %w", redact.URLError(err, c.call.Keys...))
	}
	c.resp = resp
	c.body = watchBody{r: resp.Body}
	c.Dec = sse.NewDecoder(c.capped)
	c.Dec.MaxEvent = c.call.Options.MaxEventBytes
	return nil
}

// Close releases the current connection.
func (c *Conn) Close() error { return c.resp.Close() }

// APIErr makes the error of a non-2xx answer, as Stream's requests do.
func (c *Call) APIErr(status int, h http.Header, b []byte) error {
	return APIError(c.Provider, status, redact.Header(h, c.Keys...), b, c.Keys...)
}

// StreamConn is Stream for a stream that may reconnect: parse gets the
// Conn, whose Dec a reconnect replaces.
func (c *Call) StreamConn(ctx context.Context, req *llm.Request, body any, parse func(conn *Conn, model *llm.Model) func(*llm.Builder) error) (*llm.Stream, error) {
	resp, err := c.post(ctx, req, body)
	if err != nil {
		return nil, err
	}
	model := req.Model
	conn := &Conn{call: c, resp: resp}
	conn.body = watchBody{r: resp.Body}
	hook := new(llm.WaitHook)
	conn.capped = &cappedBody{r: &conn.body, left: c.maxMessageBytes(), wait: hook}
	conn.Dec = sse.NewDecoder(conn.capped)
	conn.Dec.MaxEvent = c.Options.MaxEventBytes
	return llm.NewStream(c.message(&model), c.capOutput(parse(conn, &model), outputCap(req)), conn.Close).Waits(hook), nil
}
