package llmtest

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object that keeps its keys in the order they are written, so
// the fake's output reads like the provider's own (a Go map would sort them).
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v compactly without HTML escaping: providers send "<" and
// "&" as they are, and a parser under test should see the same.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustJSON is marshal for values built by this package, which always encode.
func mustJSON(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic("llmtest: " + err.Error())
	}
	return b
}

// prettyJSON indents like the providers' HTTP error bodies do.
func prettyJSON(v any, indent string) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, mustJSON(v), "", indent); err != nil {
		panic("llmtest: " + err.Error())
	}
	return b.Bytes()
}
