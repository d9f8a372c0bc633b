package wire

import (
	"encoding/json"
	"io"
	"iter"
	"testing"
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
			r := b.reader()
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
