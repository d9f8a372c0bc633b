package gemini

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are chunks as Gemini sends them, and odd ones.
func fastSeeds() []string {
	var out []string
	for _, c := range []string{
		chunkOf(text("Hello"), "", []int{25, 1, 0, 0}),
		chunkOf(thought("hmm")+","+text(" so"), "STOP", []int{25, 3, 7, 4}),
		chunkOf(call("read", `{"path":"a"}`, "c1", "sig"), "STOP", nil),
		chunkOf(text(`esc "\u00e9" \ud83d\ude00`), "", nil),
	} {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(c, "data: "), "\r\n\r\n"))
	}
	return append(out,
		`{"candidates":null,"usageMetadata":{"trafficType":"ON_DEMAND","promptTokensDetails":[{"modality":"TEXT","tokenCount":3}]},"error":null}`,
		`{"Candidates":[{"content":{"parts":[{"text":"x"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a","thought":null}]},"finishReason":"MAX_TOKENS","finishMessage":"m"}]} `,
		`{"candidates":[null]}`,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"usageMetadata":{"promptTokenCount":1.5}}`,
	)
}

// slowChunk is what encoding/json makes of a chunk, normalized as the
// parser reads it (an error of null is no error).
func slowChunk(data []byte) (chunk, error) {
	var c chunk
	err := json.Unmarshal(data, &c)
	if string(c.Error) == "null" {
		c.Error = nil
	}
	return c, err
}

func checkChunk(t *testing.T, data []byte) bool {
	t.Helper()
	var got chunk
	if !fastChunk(data, &got) {
		return false
	}
	want, err := slowChunk(data)
	if err != nil {
		t.Fatalf("%s: fast path accepted, encoding/json: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n fast %+v\n json %+v", data, got, want)
	}
	return true
}

func TestFastChunk(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds() {
		if checkChunk(t, []byte(s)) {
			fast++
		}
	}
	// Text and thinking chunks must take the fast path.
	if fast < 5 {
		t.Fatalf("only %d of the seeds decoded by the fast path", fast)
	}
}

func FuzzFastChunk(f *testing.F) {
	for _, s := range fastSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunk(t, data) })
}
