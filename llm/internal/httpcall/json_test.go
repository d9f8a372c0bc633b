package httpcall

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestJSONDecoder holds JSONDecoder to json.Unmarshal's answers over a run
// of events, including the bad ones in between: a bad event must not spoil
// the next.
func TestJSONDecoder(t *testing.T) {
	type ev struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	var d JSONDecoder
	for _, tt := range []struct {
		data string
		want error // nil: decodes as json.Unmarshal does
	}{
		{`{"type":"a","index":1}`, nil},
		{` {"type":"b"} ` + "\n", nil},
		{`{"type":"c"`, errIncomplete},
		{`{"type":"d","index":4}`, nil},
		{`{"type":"e"} {}`, errTrailing},
		{`{"type":"f","index":"x"}`, nil}, // a type error, as json.Unmarshal gives
		{`{"type":"g","index":7}`, nil},
		{``, errIncomplete},
		{`{"type":"h"}`, nil},
	} {
		var got, want ev
		err := d.Decode([]byte(tt.data), &got)
		if tt.want != nil {
			if !errors.Is(err, tt.want) {
				t.Errorf("%q: error %v, want %v", tt.data, err, tt.want)
			}
			continue
		}
		wantErr := json.Unmarshal([]byte(tt.data), &want)
		if (err == nil) != (wantErr == nil) || got != want {
			t.Errorf("%q: %+v, %v; json.Unmarshal: %+v, %v", tt.data, got, err, want, wantErr)
		}
	}
}
