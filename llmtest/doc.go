// Package llmtest is a fake LLM provider for tests, in the spirit of
// net/http/httptest: an http.Handler that speaks rally's real streaming
// wire formats (APIs lists them) and fails on cue.
//
//	srv := llmtest.NewServer(t,
//		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
//		llmtest.Step{Text: "Hello there", Delay: 5 * time.Millisecond},
//	)
//	// point the client under test at srv.URL + "/v1"
//	…
//	for _, r := range srv.Requests() { … r.Outcome … }
//
// # Wire formats
//
// The request path picks the format, under any prefix:
//
//   - …/chat/completions: OpenAI Chat Completions ("data: {chunk}" lines,
//     delta.content, delta.reasoning_content, delta.tool_calls fragments
//     keyed by index, finish_reason, a usage chunk with empty choices when
//     stream_options.include_usage is set, "data: [DONE]").
//   - …/responses: OpenAI Responses (response.created, output items,
//     output_text / reasoning_summary_text / function_call_arguments
//     deltas, response.completed with usage, or response.incomplete for
//     Stop "length").
//   - …/messages: Anthropic Messages (message_start with usage, content
//     blocks with text_delta, thinking_delta + signature_delta,
//     input_json_delta, a ping, message_delta with stop_reason and usage,
//     message_stop).
//   - …/models/{model}:streamGenerateContent: Gemini with alt=sse ("data:"
//     lines framed with CRLF, parts with text, thought, or functionCall
//     with args as an object, finishReason and usageMetadata).
//
// A request that asks for a stream ("stream": true, or Gemini's
// :streamGenerateContent) gets one; any other (no "stream", "stream":
// false, Gemini's :generateContent) gets the whole answer as one JSON body
// in the provider's shape, as the providers do. GET …/models lists
// Server.Models in OpenAI's shape (Gemini's for a /v1beta path or a Google
// key, Anthropic's with an anthropic-version header), and a body that is
// not a JSON object gets a 400 in the provider's shape without taking a
// step. The shapes follow real recordings of each provider, including their
// habits: Anthropic's empty first input_json_delta, OpenAI's tool-call id
// on the first fragment only, Responses' item id differing from call_id,
// Gemini's STOP after a function call.
//
// # Scripts
//
// A script is a list of Steps; request n gets step n, and past the end the
// last step repeats (so a one-step script is a constant behaviour, and an
// empty script answers every request with DefaultText). A Step is a reply —
// Text, Thinking and ToolCalls, cut into chunks sent Delay apart, with Usage
// and a Stop reason — and optionally a Fault:
//
//   - HTTPError: an error status with a realistic body for that provider
//     (Error picks one of ErrorKinds: overloaded, rate_limited,
//     usage_limit, overflow, auth, bad_request, not_found, server_error;
//     Status, Header and Body override).
//   - Reset: the TCP connection is reset before any header.
//   - Drop: the connection closes after After chunks, with no terminal
//     event (an unexpected EOF for the client).
//   - Stall: nothing more after After chunks, until the client gives up
//     or the Server is closed; a stall never outlives its request.
//   - ErrorEvent: the provider's in-stream error after After chunks inside
//     the 200 stream (Anthropic "event: error" overloaded_error, an OpenAI
//     {"error":…} chunk, Responses "error" + response.failed, a Gemini
//     error object); Error picks the kind (default overloaded). Without a
//     stream it is that HTTP error; Drop cuts the JSON body and Stall
//     holds back the headers.
//   - Pass: forwarded to Upstream (see below).
//
// Steps are JSON-friendly (LoadScript reads a file of them); the JSON form
// is documented in docs/fake-llm.md.
//
// # Presets
//
// Preset returns a named script, for demos and tests:
//
//   - flaky: a 503 (overloaded body), then success.
//   - overloaded: overloaded twice (Anthropic 529, others 503), then success.
//   - rate-limited: a 429 rate limit with retry-after: 1, then success.
//   - usage-limit: a 429 usage limit (per-day or plan cap) that says it
//     resets in 5 minutes — longer than rally waits by default, so rally
//     switches credential or fails fast naming the reset — then success.
//   - usage-reset: a 429 usage limit that says it resets in 10 seconds
//     and answers every request with it until then (Step.ResetIn), then
//     success: what retry.waitForReset waits out.
//   - overflow: a 400 context overflow, then a summary (the answer to the
//     compaction's summary request), then success, so compaction can be
//     seen to work; History("overflow") is a conversation worth compacting
//     to start from.
//   - midstream-drop: the connection drops after 3 chunks, then the same
//     text in full.
//   - resume: for a Responses client in background mode ("background":
//     true): the connection drops after 6 chunks while the stored response
//     goes on; GET …/responses/{id}?stream=true&starting_after=N replays
//     the events after N as they are generated, each once. A plain client
//     restarts and gets the text in full from the second step.
//   - stall: the stream stalls after 2 chunks (until the client's idle
//     timeout gives up), then success.
//
// # Recording
//
// The Server records every request (Requests, WriteLog, Log, OnRequest):
// time, path, API, the x-rally-attempt header, the credential redacted to
// "sk-…1234" (never the key itself; read from Authorization, x-api-key,
// x-goog-api-key or ?key=), the model, the message count, and the outcome
// ("ok", "http 503", "reset", "drop after 3", "stall after 2",
// "error event after 2", …).
//
// # Replay and proxy
//
// A Step with Raw (or Replay) serves recorded bytes exactly as given,
// whatever the path, event by event; Status lets a recorded JSON error body
// go out with its real status. With Upstream set the Server becomes a
// fault-injecting reverse proxy in front of a real provider: fault steps
// are answered locally, the others are forwarded with the request's body
// and headers intact and streamed back as they arrive.
package llmtest
