package httpcall

import (
	"bytes"
	"encoding/json"
	"errors"
)

// JSONDecoder decodes one event's JSON at a time through a json.Decoder
// kept for the whole stream. json.Unmarshal sets up its decoding state
// afresh for every call; over thousands of small events that allocation
// was a third of the cost of a text delta. The zero value is ready to use;
// a JSONDecoder serves one stream, from one goroutine.
//
// The OpenAI parsers do not use it: their hot path is a hand-written
// scanner, and their rare fallback keeps json.Unmarshal, whose error
// wording ("unexpected end of JSON input") their decode errors quote.
type JSONDecoder struct {
	src eventReader
	dec *json.Decoder
	// base is the decoder's input offset where the current event starts.
	base int64
}

var (
	errIncomplete = errors.New("incomplete JSON value")
	errTrailing   = errors.New("data after the JSON value")
)

// eventReader feeds the current event to the json.Decoder. It never
// reports io.EOF, which the decoder would keep for good: an event that
// ends before its value does is an error for that event only.
type eventReader struct{ in []byte }

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.in) == 0 {
		return 0, errIncomplete
	}
	n := copy(p, r.in)
	r.in = r.in[n:]
	return n, nil
}

// Decode decodes data, which must hold exactly one JSON value, into v.
func (d *JSONDecoder) Decode(data []byte, v any) error {
	if d.dec == nil {
		d.dec, d.base = json.NewDecoder(&d.src), 0
	}
	d.src.in = data
	err := d.dec.Decode(v)
	if err == nil {
		// Only white space may follow the value, as for json.Unmarshal.
		end := d.dec.InputOffset() - d.base
		if end < 0 || end > int64(len(data)) || !blank(data[end:]) {
			err = errTrailing
		}
	}
	d.base += int64(len(data))
	if err != nil {
		// The decoder's errors are sticky and its buffer may hold the
		// rest of this event: start the next event with a fresh one.
		d.dec, d.src.in = nil, nil
	}
	return err
}

func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
