package retry

import (
	"testing"
	"time"
)

// TestOverflowSizes reads the window and the request size out of every
// overflow of the corpus that states them; each pair below was checked
// against the entry's text by hand. An entry not listed states no window
// (a byte cap, a per-minute budget, a bare "input is too long"), and must
// report none: a wrong window learned is worse than none.
func TestOverflowSizes(t *testing.T) {
	want := map[string][2]int{
		"anthropic-400-input-plus-max-tokens-exceed-context-limit": {200000, 178959},
		"anthropic-input-plus-max-tokens-continue":                 {200000, 199759},
		"bolt-input-plus-max-tokens-text":                          {204648, 90402},
		"claude-code-input-plus-max-tokens-wrapped":                {204648, 189136},
		"kimi-request-exceeded-model-token-limit":                  {131072, 0},
		"copilot-400-prompt-token-count-exceeds-limit":             {64000, 65446},
		"copilot-400-model-max-prompt-tokens-exceeded":             {64000, 138898},
		"copilot-prompt-token-count-ai-sdk":                        {128000, 146270},
		"vllm-prompt-too-long-to-fit-into-model":                   {4096, 25938},
		"vllm-input-prompt-too-long-exceeds-limit":                 {1000, 36893},
		"sglang-input-length-exceeds-maximum-allowed":              {59862, 160062},
		"sglang-input-longer-than-context-length":                  {40960, 61709},
		"omlx-prompt-too-long-exceeds-max-context-window":          {32768, 41911},
		"omlx-anthropic-adapter-prompt-too-long":                   {110900, 131787},
		"rapid-mlx-total-prompt-tokens-exceeds-safe-limit":         {2048, 11573},
		"lmstudio-n-keep-ge-n-ctx-opencode":                        {7424, 15028},
		"lmstudio-n-keep-ge-n-ctx-continue":                        {4096, 4270},
		"llamacpp-exceeds-context-size-wrapped-lines":              {123904, 124315},
		"openai-400-context-length-exceeded":                       {4097, 4294},
		"openai-context-length-with-completion":                    {8192, 7554},
		"openai-400-context-length-sdk-message":                    {128000, 204308},
		"azure-400-context-length-exceeded":                        {8192, 10383},
		"azure-context-length-exceeded-completion-budget":          {128000, 124171},
		"openrouter-400-endpoint-max-context":                      {16384, 94307},
		"openrouter-context-output-budget-lowercased":              {131072, 7884},
		"openrouter-502-upstream-wraps-overflow":                   {16000, 13069},
		"mistral-prompt-too-large-for-model":                       {131072, 152960},
		"deepseek-400-context-length":                              {131072, 122942},
		"xai-400-maximum-prompt-length":                            {131072, 136973},
		"xai-maximum-prompt-length-text":                           {131072, 537812},
		"anthropic-400-prompt-too-long":                            {200000, 219898},
		"anthropic-prompt-too-long-message-only":                   {200000, 202128},
		"gemini-400-input-token-count-exceeds":                     {131072, 132478},
		"gemini-400-input-token-count-sdk-wrapped":                 {1048576, 3475108},
		"gemini-400-input-token-count-array-form":                  {1048576, 1200293},
		"bedrock-validation-prompt-too-long-claude":                {200000, 227255},
		"llamacpp-500-exceed-context-size-error":                   {256, 1407},
		"llamacpp-exceed-context-size-error-400-body":              {8192, 14429},
		"llamacpp-python-requested-tokens-exceed-context-window":   {2048, 2285},
		"vllm-400-maximum-context-length":                          {6048, 568},
		"vllm-maximum-context-length-message":                      {4096, 4036},
		"vllm-400-max-tokens-too-large-for-context":                {4096, 2778},
		"lmstudio-context-overflow-keep-first-tokens":              {2048, 14538},
		"lmstudio-context-overflow-log-line":                       {7866, 10136},
		"lmstudio-400-keep-first-tokens-title":                     {0, 15857},
		"together-input-validation-inputs-plus-max-new-tokens":     {2048, 2019},
		// Issue 23's overflow as a length or a range.
		"dashscope-acp-range-of-input-length-983616":       {983616, 0},
		"ragflow-range-of-input-length-30000":              {30000, 0},
		"llama-cpp-python-requested-tokens-exceed-window":  {512, 516},
		"sambanova-requested-generation-length-1":          {4096, 4309},
		"tei-inputs-must-have-less-than-512-tokens":        {512, 0},
		"tgi-422-via-openai-sdk-ui-tars":                   {65537, 79993},
		"tgi-stream-validation-inputs-plus-max-new-tokens": {2048, 1887},
		"vllm-serving-chat-maximum-context-8192":           {8192, 7691},
		"vllm-validation-error-total-over-context":         {128000, 62466},
		"xinference-vllm-decoder-prompt-longer":            {16384, 17772},
	}
	seen := 0
	for _, e := range loadCorpus(t) {
		t.Run(e.Name, func(t *testing.T) {
			v := Classify(e.failure())
			got := [2]int{v.Window, v.Requested}
			w, ok := want[e.Name]
			if ok {
				seen++
			}
			if v.Class != ContextOverflow {
				w = [2]int{}
			}
			if got != w {
				t.Errorf("window, requested = %v, want %v\nbody: %.300s", got, w, e.Body)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("%d of the %d entries named here are in the corpus", seen, len(want))
	}
}

// TestOverflowSizesReport: Inspect passes the sizes on, so the one
// inspection of a failure is all a caller reads.
func TestOverflowSizesReport(t *testing.T) {
	err := describing{f: Failure{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`}}
	r := Inspect(err, time.Time{})
	if r.Class != ContextOverflow || r.Window != 8192 || r.Requested != 9100 {
		t.Fatalf("report %+v, want overflow with window 8192 and 9100 requested", r)
	}
	budget := describing{f: Failure{Status: 429, Body: "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 342389."}}
	if r := Inspect(budget, time.Time{}); r.Class != ContextOverflow || r.Window != 0 {
		t.Fatalf("a per-minute budget read as window %d (%+v)", r.Window, r)
	}
}
