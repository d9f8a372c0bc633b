package telemetry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sender posts one encoded OTLP request: over HTTP (POST the protobuf to
// the signal's URL) or gRPC (the same bytes in one length-prefixed frame
// over HTTP/2, the status in the trailers).
type sender struct {
	url     string // the HTTP URL, or the gRPC method's URL
	shown   string // url for errors: without its query, which may hold a token
	grpc    bool
	headers http.Header
	client  *http.Client
	timeout time.Duration

	// failed is the last export's error, nil once one succeeds: the
	// batches go out from a goroutine of their own, which has no one to
	// tell, so Telemetry.Shutdown asks here what the flush lost.
	mu     sync.Mutex
	failed error
}

func (s *sender) lastErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// The gRPC methods of the OTLP collector services.
const (
	grpcTraces  = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	grpcMetrics = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
)

// newSender is the signal's sender ("traces" or "metrics") for endpoint,
// a URL already complete for HTTP, or the collector's base URL for gRPC.
func newSender(proto, endpoint, signal string, headers http.Header, timeout time.Duration) (*sender, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: %s endpoint: want an http:// or https:// URL with a host", signal)
	}
	if u.User != nil {
		return nil, fmt.Errorf("telemetry: %s endpoint: no credentials in the URL; put them in OTEL_EXPORTER_OTLP_HEADERS", signal)
	}
	s := &sender{headers: headers, timeout: timeout}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: (&net.Dialer{Timeout: timeout}).DialContext,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	if proto == ProtocolGRPC {
		s.grpc = true
		method := grpcTraces
		if signal == "metrics" {
			method = grpcMetrics
		}
		u.Path, u.RawQuery = method, ""
		// gRPC is HTTP/2 only: over TLS by ALPN, in clear text by prior
		// knowledge (h2c), as collectors listen on 4317.
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	}
	s.url, s.client = u.String(), &http.Client{Transport: tr, Timeout: timeout}
	shown := *u
	shown.RawQuery, shown.Fragment = "", ""
	s.shown = shown.String()
	return s, nil
}

// send posts body; ctx and the timeout bound it.
func (s *sender) send(ctx context.Context, body []byte) error {
	err := s.post(ctx, body)
	s.mu.Lock()
	s.failed = err
	s.mu.Unlock()
	return err
}

func (s *sender) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if s.grpc {
		frame := make([]byte, 5, 5+len(body))
		binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
		body = append(frame, body...)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for k, vs := range s.headers {
		req.Header[k] = vs
	}
	if s.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, below
		}
		return fmt.Errorf("export to %s: %w", s.shown, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("export to %s: HTTP %d", s.shown, resp.StatusCode)
	}
	if s.grpc {
		st := resp.Trailer.Get("Grpc-Status")
		if st == "" {
			st = resp.Header.Get("Grpc-Status") // a trailers-only answer
		}
		if st != "0" {
			return fmt.Errorf("export to %s: gRPC status %s %s", s.shown, st, resp.Trailer.Get("Grpc-Message"))
		}
	}
	return nil
}

// headers parses OTEL_EXPORTER_OTLP_HEADERS: key=value pairs, comma
// separated, values URL-encoded. A malformed pair is refused without
// quoting it (it may hold a token).
func headers(v string) (http.Header, error) {
	h := http.Header{}
	for i, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_HEADERS: pair %d is not key=value", i+1)
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(val)); err == nil {
			val = dv
		}
		h.Add(k, strings.TrimSpace(val))
	}
	return h, nil
}

// timeout is OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds), capped at
// FlushTimeout so a flush at exit stays short.
func timeout(v string) time.Duration {
	ms, err := strconv.Atoi(v)
	if err != nil || ms <= 0 {
		return FlushTimeout
	}
	return min(time.Duration(ms)*time.Millisecond, FlushTimeout)
}
