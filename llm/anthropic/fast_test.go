package anthropic

import (
	"encoding/json"
	"testing"
)

var fastSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hmm \u00e9 \ud83d\ude00"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"x":[1,2]}}} `,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
	`{"type":"content_block_delta","index":0,"Delta":{"text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":null}`,
	`{"type":"content_block_delta","index":1.0,"delta":{}}`,
}

func checkDelta(t *testing.T, data []byte) bool {
	t.Helper()
	var got event
	if !fastDelta(data, &got) {
		return false
	}
	var want event
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s: fast path accepted, encoding/json: %v", data, err)
	}
	if got != want {
		t.Fatalf("%s:\n fast %+v\n json %+v", data, got, want)
	}
	return true
}

func TestFastDelta(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds {
		if checkDelta(t, []byte(s)) {
			fast++
		}
	}
	if fast < 5 { // every kind of delta takes the fast path
		t.Fatalf("only %d seeds decoded by the fast path", fast)
	}
}

func FuzzFastDelta(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDelta(t, data) })
}
