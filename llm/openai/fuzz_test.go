package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// drain reads a stream to its end, failing if it does not end in a
// bounded number of events.
func drain(t *testing.T, s *llm.Stream, limit int) {
	for i := 0; ; i++ {
		_, err := s.Next()
		if err == io.EOF {
			break
		}
		if i > limit {
			t.Fatal("stream does not end")
		}
	}
	if m := s.Message(); m.StopReason == "" {
		t.Fatalf("ended without a stop reason: %+v", m)
	}
}

// FuzzParse feeds arbitrary bytes to both parsers as a response body: they
// must end, without panic, with a stop reason.
func FuzzParse(f *testing.F) {
	providertest.Seeds(f,
		chatStream(textChunk("a\n\"b\" \u00e9"), `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, "[DONE]"),
		respStream(respText("x"), `{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{\"a\\ud83d\\ude00\":1}"}`, respCompleted),
		"data: {\"error\":{\"message\":\"x\"}}\n\n",
		"event: error\ndata:\n\n")
	f.Fuzz(func(t *testing.T, body []byte) {
		// Every event yields a bounded number of stream events; the body
		// cannot hold more events than bytes.
		limit := 16*len(body) + 16
		drain(t, parseChat(body), limit)
		drain(t, parseResp(body), limit)
	})
}

// FuzzFastDecode holds the fast decoders to encoding/json: whenever one
// accepts an event, encoding/json must accept it too and decode the same.
func FuzzFastDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		b, _ := os.ReadFile(name)
		d := sse.NewDecoder(bytes.NewReader(b))
		for {
			ev, err := d.Next()
			if err != nil {
				break
			}
			f.Add(bytes.Clone(ev.Data))
		}
	}
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"\ud83d\ude00 \ud800 \u00e9\n"},"finish_reason":null}]}`,
		`{"choices":[{"index":-0,"delta":{"tool_calls":[{"index":1,"id":null,"function":null}]}}],"usage":null}`,
		`{"Choices":[],"choices":null}`,
		`{"type":"response.output_text.delta","item_id":"m","delta":"a\/b","output_index":3}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}",
	} {
		f.Add([]byte(s))
	}
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.AllowUnexported()}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fc, jc chunk
		if fastChunk(data, &fc) {
			if err := json.Unmarshal(data, &jc); err != nil {
				t.Fatalf("fast chunk accepted what encoding/json refuses (%v): %q", err, data)
			}
			if string(jc.Error) == "null" {
				jc.Error = nil
			}
			if diff := cmp.Diff(jc, fc, opts); diff != "" {
				t.Fatalf("chunk %q (-json +fast):\n%s", data, diff)
			}
		}
		var fe, je respEvent
		if fastEvent(data, &fe) {
			if err := json.Unmarshal(data, &je); err != nil {
				t.Fatalf("fast event accepted what encoding/json refuses (%v): %q", err, data)
			}
			if diff := cmp.Diff(je, fe, opts); diff != "" {
				t.Fatalf("event %q (-json +fast):\n%s", data, diff)
			}
		}
	})
}

func TestFastPathTaken(t *testing.T) {
	// The common events must not fall back to encoding/json.
	for _, data := range []string{
		strings.TrimPrefix(strings.TrimSpace(chatStream(textChunk("x"))), "data: "),
		`{"id":"chatcmpl-CK0XBiHwsrgUyuIOsQJ7L2KjpG0pb","object":"chat.completion.chunk","created":1758884649,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_cbf1785567","usage":null,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]},"logprobs":null,"finish_reason":null}],"obfuscation":""}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":" user"}}],"created":1761672368,"id":"chatcmpl-v","model":"openai/gpt-oss-20b","system_fingerprint":"b6865-1c1409e13","object":"chat.completion.chunk"}`,
	} {
		var c chunk
		if !fastChunk([]byte(data), &c) {
			t.Errorf("slow path for %s", data)
		}
	}
	var e respEvent
	if !fastEvent([]byte(respText("x")), &e) || e.Delta != "x" || e.ItemID != "msg_1" {
		t.Errorf("slow path or wrong event: %+v", e)
	}
}
