package llmtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
)

type exchangeKey struct{}

// newProxy forwards to up, flushing every write so a stream arrives as the
// provider sends it.
func newProxy(up *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// SetURL also sets Host to the provider's, which it needs
			// for TLS and routing; all other headers go as sent.
			pr.SetURL(up)
		},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if x, ok := resp.Request.Context().Value(exchangeKey{}).(*exchange); ok {
				x.set(fmt.Sprintf("upstream %d", resp.StatusCode))
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
				x.set("upstream error")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			msg := "llmtest: upstream: " + err.Error()
			_, _ = w.Write(append(mustJSON(obj{{"error", obj{{"message", msg}, {"type", "upstream_error"}}}}), '\n'))
		},
		// A client that leaves mid-stream is normal here, not worth a log
		// line on the test's stderr.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// forward sends the request on to Upstream, body restored as received.
func (x *exchange) forward() {
	r := x.r.WithContext(context.WithValue(x.r.Context(), exchangeKey{}, x))
	r.Body = io.NopCloser(bytes.NewReader(x.body))
	r.ContentLength = int64(len(x.body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(x.body)), nil }
	for k, v := range x.st.Header {
		// Step headers go on the answer, as for local replies.
		x.w.Header().Set(k, v)
	}
	x.s.proxy.ServeHTTP(x.w, r)
}
