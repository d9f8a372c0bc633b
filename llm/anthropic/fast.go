package anthropic

import "github.com/rally-agent/rally/internal/jsonscan"

// fastDelta decodes a content_block_delta event into e the way
// encoding/json would, in one pass, or reports false for any other event
// and anything unusual, which go to encoding/json. Deltas are nearly every
// event of a stream.
func fastDelta(data []byte, e *event) bool {
	s := jsonscan.New(data)
	var seen uint32
	return s.Fields(func(k []byte) bool {
		switch string(k) {
		case "type":
			return jsonscan.Once(&seen, 1) && s.Text(&e.Type)
		case "index":
			return jsonscan.Once(&seen, 2) && s.Int(&e.Index)
		case "delta":
			return jsonscan.Once(&seen, 4) && blockDelta(&s, e)
		case "message", "content_block", "usage":
			return false
		}
		return s.Skip(0)
	}) && s.End() && e.Type == "content_block_delta"
}

func blockDelta(s *jsonscan.Scanner, e *event) bool {
	d := &e.Delta
	var seen uint32
	return s.Null() || s.Fields(func(k []byte) bool {
		switch string(k) {
		case "type":
			return jsonscan.Once(&seen, 1) && s.Text(&d.Type)
		case "text":
			return jsonscan.Once(&seen, 2) && s.Text(&d.Text)
		case "thinking":
			return jsonscan.Once(&seen, 4) && s.Text(&d.Thinking)
		case "signature":
			return jsonscan.Once(&seen, 8) && s.Text(&d.Signature)
		case "partial_json":
			return jsonscan.Once(&seen, 16) && s.Text(&d.PartialJSON)
		case "stop_reason", "stop_details":
			return false
		}
		return s.Skip(0)
	})
}
