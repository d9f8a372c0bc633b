package openai

import "github.com/rally-agent/rally/internal/jsonscan"

// scan is the fast decoders' scanner, with their own readers added (the
// tool-call deltas' and the Responses events'). Streamed text in a chunk
// (content, refusal, reasoning) is read by chunkAt as views; ids, names
// and tool-call arguments, which the message keeps as they are, are
// always copies.
type scan struct {
	jsonscan.Scanner
}

// The fast decoders fill the same structs encoding/json would, for the
// events that carry deltas; see scan for why and how they stay exact.

func (s *scan) toolDelta(t *toolDelta) bool {
	var seen uint32
	return s.Fields(func(k []byte) bool {
		switch string(k) {
		case "index":
			if !jsonscan.Once(&seen, 1) {
				return false
			}
			if s.Null() {
				return true
			}
			n := new(int)
			t.Index = n
			return s.Int(n)
		case "id":
			return jsonscan.Once(&seen, 2) && s.Text(&t.ID)
		case "function":
			if !jsonscan.Once(&seen, 4) {
				return false
			}
			if s.Null() {
				return true
			}
			var fseen uint32
			return s.Fields(func(k []byte) bool {
				switch string(k) {
				case "name":
					return jsonscan.Once(&fseen, 1) && s.Text(&t.Function.Name)
				case "arguments":
					return jsonscan.Once(&fseen, 2) && s.Text(&t.Function.Arguments)
				}
				return s.Skip(0)
			})
		}
		return s.Skip(0)
	})
}

// fastEvent decodes a Responses delta event into e, or reports false for
// input it leaves to encoding/json (any event with an item, a response or
// an error code, anything unusual).
func fastEvent(data []byte, e *respEvent) bool {
	s := scan{Scanner: jsonscan.New(data)}
	var seen uint32
	ok := s.Fields(func(k []byte) bool {
		switch string(k) {
		case "type":
			return jsonscan.Once(&seen, 1) && s.Text(&e.Type)
		case "item_id":
			return jsonscan.Once(&seen, 2) && s.Text(&e.ItemID)
		case "delta":
			return jsonscan.Once(&seen, 4) && s.Text(&e.Delta)
		case "output_index":
			return jsonscan.Once(&seen, 8) && s.Int(&e.OutputIndex)
		case "summary_index":
			return jsonscan.Once(&seen, 16) && s.Int(&e.SummaryIndex)
		case "item", "response", "code":
			return false
		}
		return s.Skip(0)
	})
	return ok && s.End()
}
