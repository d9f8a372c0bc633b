package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// TestDefaultClientSmallBuffers: the shared client's 1 KiB connection
// buffers (llm.NewTransport) still carry what is far larger than them: a
// 2 MiB request body, a response header line of 16 KiB, and one 1 MiB
// event; and calls share its connections.
func TestDefaultClientSmallBuffers(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 2<<20/16)
	long := strings.Repeat("h", 16<<10)
	event := "data: " + strings.Repeat("e", 1<<20) + "\n\n"
	remotes := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remotes <- r.RemoteAddr
		b, _ := io.ReadAll(r.Body)
		if want := fmt.Sprintf(`{"items":["%s"]}`, body); string(b) != want {
			http.Error(w, fmt.Sprintf("body of %d bytes, want %d", len(b), len(want)), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Long", long)
		io.WriteString(w, event)
	}))
	defer srv.Close()
	for call := range 2 {
		resp, err := Post(context.Background(), &llm.ClientOptions{}, srv.URL, nil, &listed{Items: []any{body}}, 0, func(status int, _ http.Header, b []byte) error {
			return fmt.Errorf("status %d: %s", status, b)
		})
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Close()
		if err != nil || !bytes.Equal(got, []byte(event)) {
			t.Fatalf("call %d: read %d bytes of the %d-byte event: %v", call, len(got), len(event), err)
		}
		if h := resp.Header.Get("X-Long"); h != long {
			t.Fatalf("call %d: header of %d bytes, want %d", call, len(h), len(long))
		}
	}
	if a, b := <-remotes, <-remotes; a != b {
		t.Errorf("the second call came from %s, the first from %s: the client's connections are not shared", b, a)
	}
	if tr := llm.NewTransport(); tr.ReadBufferSize > 1<<10 || tr.WriteBufferSize > 1<<10 {
		t.Errorf("buffers %d and %d bytes, want at most 1 KiB each", tr.ReadBufferSize, tr.WriteBufferSize)
	}
}

// TestRequestBodyLetGo: once the transport has written and closed the
// body and the response headers are in, neither the body nor its reader
// (which the request, held for the whole stream, keeps) holds the buffer.
func TestRequestBodyLetGo(t *testing.T) {
	for _, order := range []string{"closed, then released", "released, then closed"} {
		t.Run(order, func(t *testing.T) {
			b, err := encodeBody(&listed{Items: []any{strings.Repeat("x", 100<<10)}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := b.reader()
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := io.Copy(io.Discard, r); n < 100<<10 {
				t.Fatalf("read %d bytes", n)
			}
			if order == "closed, then released" {
				r.Close()
				b.release()
			} else {
				b.release()
				r.Close()
			}
			if b.buf != nil {
				t.Errorf("the body holds its %d-byte buffer after the last release", b.buf.Cap())
			}
			if n := r.(*bodyReader).r.Size(); n != 0 {
				t.Errorf("a closed reader holds the %d bytes it read", n)
			}
			if _, err := b.reader(); err == nil {
				t.Error("a released body gave a new reader")
			}
		})
	}
}
