package httpcall

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rally-agent/rally/llm"
)

type listed struct {
	Model string `json:"model,omitempty"`
	Items []any  `json:"-"`
}

func (l *listed) List() (string, iter.Seq[any]) { return "items", Items(l.Items) }

// TestEncodeList: a Lister's body is its fields with the list added, the
// list's elements as encoding/json writes them.
func TestEncodeList(t *testing.T) {
	for _, tc := range []struct {
		name string
		body *listed
		want string
	}{
		{"fields and items", &listed{Model: "m", Items: []any{1, "a<b>", map[string]int{"x": 1}}}, `{"model":"m","items":[1,"a\u003cb\u003e",{"x":1}]}`},
		{"no fields", &listed{Items: []any{true}}, `{"items":[true]}`},
		{"no items", &listed{Model: "m"}, `{"model":"m","items":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeBody(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := b.reader()
			got, _ := io.ReadAll(r)
			if string(got) != tc.want {
				t.Fatalf("got %s want %s", got, tc.want)
			}
			var v any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatal(err)
			}
			// The buffer goes back only when the reader is closed and the
			// request released, in either order.
			b.release()
			if b.refs != 1 {
				t.Fatalf("refs %d after release with a reader open", b.refs)
			}
			r.Close()
			r.Close()
			if b.refs != 0 {
				t.Fatalf("refs %d after the reader closed (twice)", b.refs)
			}
		})
	}
}

// TestPostSendsBodyAgain: the transport can read a pooled body a second
// time (here for a 307 redirect, as for a retry on a fresh connection).
func TestPostSendsBodyAgain(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.URL.Path + " " + string(b)
		if r.URL.Path == "/a" {
			http.Redirect(w, r, "/b", http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	body := &listed{Model: "m", Items: []any{"x"}}
	resp, err := Post(context.Background(), &llm.ClientOptions{}, srv.URL+"/a", nil, body, 0, func(status int, _ http.Header, b []byte) error {
		return fmt.Errorf("status %d: %s", status, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Close()
	want := `{"model":"m","items":["x"]}`
	for _, path := range []string{"/a", "/b"} {
		if g := <-got; g != path+" "+want {
			t.Errorf("server read %q, want %q", g, path+" "+want)
		}
	}
}
