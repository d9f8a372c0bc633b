package openai

// The fast decoders fill the same structs encoding/json would, for the
// events that carry deltas; see scan for why and how they stay exact.

// fastChunk decodes a chat.completion.chunk into c, or reports false for
// input it leaves to encoding/json (any usage object, an error, reasoning
// details, anything unusual).
func fastChunk(data []byte, c *chunk) bool {
	s := scan{b: data}
	var seen uint32
	ok := s.fields(func(k []byte) bool {
		switch string(k) {
		case "choices":
			return once(&seen, 1) && array(&s, &c.Choices, s.choice)
		case "usage":
			return once(&seen, 2) && s.null()
		case "error":
			return once(&seen, 4) && s.null()
		}
		return s.skip(0)
	})
	return ok && s.end()
}

// array reads a JSON array into *dst, each element by elem, or null as a
// nil slice, as encoding/json does. elem reads one element at the
// scanner's position: a method value bound to the scanner (s.choice), as a
// method expression taking the scanner as an argument would make it escape
// to the heap, one more allocation per chunk.
func array[T any](s *scan, dst *[]T, elem func(*T) bool) bool {
	if s.null() {
		*dst = nil
		return true
	}
	if !s.eat('[') {
		return false
	}
	out := make([]T, 0, 1)
	if !s.eat(']') {
		for {
			var zero T
			out = append(out, zero)
			if !elem(&out[len(out)-1]) {
				return false
			}
			if !s.eat(',') {
				break
			}
		}
		if !s.eat(']') {
			return false
		}
	}
	*dst = out
	return true
}

func (s *scan) choice(ch *choice) bool {
	var seen uint32
	return s.fields(func(k []byte) bool {
		switch string(k) {
		case "index":
			return once(&seen, 1) && s.int(&ch.Index)
		case "delta":
			return once(&seen, 2) && (s.null() || s.delta(&ch.Delta))
		case "finish_reason":
			return once(&seen, 4) && s.optText(&ch.FinishReason)
		}
		return s.skip(0)
	})
}

func (s *scan) delta(d *delta) bool {
	var seen uint32
	return s.fields(func(k []byte) bool {
		switch string(k) {
		case "content":
			return once(&seen, 1) && s.text(&d.Content)
		case "refusal":
			return once(&seen, 2) && s.text(&d.Refusal)
		case "reasoning_content":
			return once(&seen, 4) && s.text(&d.ReasoningContent)
		case "reasoning":
			return once(&seen, 8) && s.text(&d.Reasoning)
		case "tool_calls":
			return once(&seen, 16) && array(s, &d.ToolCalls, s.toolDelta)
		case "reasoning_details":
			return once(&seen, 32) && s.null()
		}
		return s.skip(0)
	})
}

func (s *scan) toolDelta(t *toolDelta) bool {
	var seen uint32
	return s.fields(func(k []byte) bool {
		switch string(k) {
		case "index":
			if !once(&seen, 1) {
				return false
			}
			if s.null() {
				return true
			}
			n := new(int)
			t.Index = n
			return s.int(n)
		case "id":
			return once(&seen, 2) && s.text(&t.ID)
		case "function":
			if !once(&seen, 4) {
				return false
			}
			if s.null() {
				return true
			}
			var fseen uint32
			return s.fields(func(k []byte) bool {
				switch string(k) {
				case "name":
					return once(&fseen, 1) && s.text(&t.Function.Name)
				case "arguments":
					return once(&fseen, 2) && s.text(&t.Function.Arguments)
				}
				return s.skip(0)
			})
		}
		return s.skip(0)
	})
}

// optText reads a string or null into a *string, as encoding/json does.
func (s *scan) optText(dst **string) bool {
	if s.null() {
		*dst = nil
		return true
	}
	v := new(string)
	*dst = v
	return s.text(v)
}

// fastEvent decodes a Responses delta event into e, or reports false for
// input it leaves to encoding/json (any event with an item, a response or
// an error code, anything unusual).
func fastEvent(data []byte, e *respEvent) bool {
	s := scan{b: data}
	var seen uint32
	ok := s.fields(func(k []byte) bool {
		switch string(k) {
		case "type":
			return once(&seen, 1) && s.text(&e.Type)
		case "item_id":
			return once(&seen, 2) && s.text(&e.ItemID)
		case "delta":
			return once(&seen, 4) && s.text(&e.Delta)
		case "output_index":
			return once(&seen, 8) && s.int(&e.OutputIndex)
		case "summary_index":
			return once(&seen, 16) && s.int(&e.SummaryIndex)
		case "item", "response", "code":
			return false
		}
		return s.skip(0)
	})
	return ok && s.end()
}
