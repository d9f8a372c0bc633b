package openai

// The whole-chunk reader the tests and benchmarks hold the stream's
// chunkDecoder to: every chunk read from its first byte, nothing resumed.
// The parser itself decodes through chunkDecoder.decode.

// fastChunk decodes a chat.completion.chunk into c, or reports false for
// input it leaves to encoding/json (any usage object, an error, reasoning
// details, anything unusual). Its text is views (see fastChunkView).
func fastChunk(data []byte, c *chunk) bool {
	var buf []byte
	return fastChunkView(data, c, &buf)
}

// fastChunkView is fastChunk with the streamed text read as views of data
// or of *buf (see scan), valid until *buf is written again. It empties
// *buf first. The decoding is chunkAt's; tool-call deltas are read by
// toolDelta.
func fastChunkView(data []byte, c *chunk, buf *[]byte) bool {
	*buf = (*buf)[:0]
	return chunkAt(data, c, buf, nil)
}
