package llm

import "net/http"

// Per-connection buffer sizes of NewTransport. net/http's default is 4 KiB
// each, which a streaming session holds for as long as it streams: a third
// of its heap. 1 KiB holds a request's headers; the body is copied to the
// socket in larger writes past the buffer, and a stream's reader (the SSE
// decoder, whose buffer grows for a fast stream) reads past it once its own
// buffer is as large. A longer header line still reads, in pieces.
const (
	transportReadBuffer  = 1 << 10
	transportWriteBuffer = 1 << 10
)

// NewTransport returns an HTTP transport configured as the one rally's
// clients use when ClientOptions.HTTP is nil: http.DefaultTransport's
// settings (proxies from the environment, dial and TLS timeouts, HTTP/2)
// with smaller buffers per connection. Build a client on it to change the
// pool's limits (MaxIdleConnsPerHost for many sessions to one host).
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ReadBufferSize, t.WriteBufferSize = transportReadBuffer, transportWriteBuffer
	return t
}
