package journal

import (
	"encoding/json"
	"unsafe"

	"github.com/rally-agent/rally/internal/jsonscan"
	"github.com/rally-agent/rally/llm"
)

// scanner reads entry lines in a single pass (jsonscan), for the lines
// rally and pi write. It gives up on anything it does not decode exactly
// as encoding/json would (a key in another case, a legacy field, a pi
// role whose own fields the context needs, bad JSON); the caller then
// decodes the line with encoding/json, which also words the warning. One
// scanner reads a whole file.
type scanner struct {
	jsonscan.Scanner
	// names holds the values that repeat on every line (roles, types,
	// model names), so a long file keeps one copy of each.
	names  map[string]string
	recent [64]string // the names met last, by intern's hash
	// What a read keeps is copied into shared blocks (arena.go): the
	// strings and arguments, and each message's content, decoded first
	// into scratch.
	arena   arena
	blocks  blocks
	usages  usages
	scratch []llm.Content
	parent  string // f.ParentID's target, a view of the line (see keepParent)
	// msgs is the slab message entries are decoded into, in file order;
	// it becomes Loaded.Messages when the context is all of them
	// (journalReader.direct). It is never reallocated: entries point
	// into it.
	msgs []llm.Message
}

// The keys encoding/json would match, in any case, for an entry, a
// message, a content block, usage and cost. An entry's legacy
// firstKeptEntryIndex, a compaction's tokensBefore and a custom_message's
// content are left to it.
var (
	entryKeys   = []string{"type", "id", "parentId", "timestamp", "message", "retried", "decision", "summary", "firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore", "provider", "modelId", "name", "content"}
	messageKeys = []string{"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "toolCallId", "toolName", "isError", "timestamp"}
	blockKeys   = []string{"type", "text", "thinking", "thinkingSignature", "data", "mimeType", "id", "name", "arguments", "thoughtSignature"}
	usageKeys   = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
	costKeys    = []string{"input", "output", "cacheRead", "cacheWrite", "total"}
)

// entry reads an entry line: its fields and, for a message entry, the
// message; ok is false when the line needs encoding/json. f.Timestamp
// shares the line's bytes: it is only to be parsed.
func (s *scanner) entry(line []byte) (f entryFields, m *llm.Message, ok bool) {
	s.Scanner = jsonscan.New(line)
	ok = s.FieldsFold(entryKeys, func(k string) bool {
		switch k {
		case "type":
			return s.name(&f.Type)
		case "id":
			return s.text(&f.ID)
		case "parentId":
			f.ParentID = nil
			if s.Null() {
				return true
			}
			// A view: the caller keeps it (keepParent), nearly always
			// as the id of the entry above, which needs no copy.
			s.parent = ""
			f.ParentID = &s.parent
			return s.view(f.ParentID)
		case "timestamp":
			return s.view(&f.Timestamp)
		case "message":
			if s.Peek() != '{' {
				return false
			}
			m = s.newMessage()
			return s.message(m)
		case "retried":
			return s.Bool(&f.Retried)
		case "decision":
			// Only on failed calls and the answer ending a retry chain:
			// rare enough to leave to encoding/json.
			if s.Null() {
				f.Decision = nil
				return true
			}
			raw, ok := s.Raw()
			if f.Decision == nil {
				f.Decision = new(Decision) // a repeated key fills the same one, as encoding/json does
			}
			return ok && json.Unmarshal(raw, f.Decision) == nil
		case "summary":
			return s.text(&f.Summary)
		case "firstKeptEntryId":
			return s.text(&f.FirstKeptEntryID)
		case "provider":
			return s.name(&f.Provider)
		case "modelId":
			return s.name(&f.ModelID)
		case "name":
			return s.text(&f.Name)
		}
		return false
	}) && s.End()
	if !ok || m != nil && !plainRole(m.Role) {
		s.dropMessage(m)
		return entryFields{}, nil, false
	}
	return f, m, true
}

// newMessage returns the next message of the slab the read decodes into
// (msgs, sized to the file's lines), or one of its own when it is full.
func (s *scanner) newMessage() *llm.Message {
	if len(s.msgs) == cap(s.msgs) {
		return new(llm.Message)
	}
	s.msgs = s.msgs[:len(s.msgs)+1]
	m := &s.msgs[len(s.msgs)-1]
	*m = llm.Message{} // already zero: written so its page is faulted in once (firstWrite)
	return m
}

// dropMessage gives back m, the message of a line the fast path left to
// encoding/json, if it is the slab's last.
func (s *scanner) dropMessage(m *llm.Message) {
	if k := len(s.msgs); m != nil && k > 0 && m == &s.msgs[k-1] {
		s.msgs[k-1] = llm.Message{}
		s.msgs = s.msgs[:k-1]
	}
}

// plainRole reports whether a message of role r is all llm.Message holds:
// pi's own roles are read by encoding/json and keep their line's message
// (Entry.PiMessage), for the fields of their own that the context
// (contextMessage) and viewers need.
func plainRole(r llm.Role) bool {
	switch r {
	case llm.User, llm.Assistant, llm.ToolResult:
		return true
	}
	return false
}

// message reads a message as llm.Message.UnmarshalJSON does.
func (s *scanner) message(m *llm.Message) bool {
	return s.FieldsFold(messageKeys, func(k string) bool {
		switch k {
		case "role":
			return s.name((*string)(&m.Role))
		case "content":
			m.Content = nil
			switch s.Peek() {
			case '"':
				var t string
				ok := s.text(&t)
				s.scratch = append(s.scratch[:0], llm.Text(t))
				m.Content = s.blocks.copy(s.scratch)
				return ok
			case '[':
				// Decoded into scratch, then copied once it is whole.
				if !jsonscan.Array(&s.Scanner, &s.scratch, s.block) {
					return false
				}
				m.Content = s.blocks.copy(s.scratch)
				if m.Content == nil && s.scratch != nil {
					m.Content = []llm.Content{} // [] is not null
				}
				return true
			}
			return s.Null()
		case "api":
			return s.name(&m.API)
		case "provider":
			return s.name(&m.Provider)
		case "model":
			return s.name(&m.Model)
		case "usage":
			if s.Null() {
				m.Usage = nil
				return true
			}
			if m.Usage == nil {
				m.Usage = s.usages.next()
			}
			return s.usage(m.Usage)
		case "stopReason":
			return s.name((*string)(&m.StopReason))
		case "errorMessage":
			return s.text(&m.ErrorMessage)
		case "toolCallId":
			return s.text(&m.ToolCallID)
		case "toolName":
			return s.name(&m.ToolName)
		case "isError":
			return s.Bool(&m.IsError)
		}
		ts := int(m.Timestamp)
		ok := s.Int(&ts)
		m.Timestamp = int64(ts)
		return ok
	})
}

func (s *scanner) block(c *llm.Content) bool {
	return s.FieldsFold(blockKeys, func(k string) bool {
		switch k {
		case "type":
			return s.name(&c.Type)
		case "text":
			return s.text(&c.Text)
		case "thinking":
			return s.text(&c.Thinking)
		case "thinkingSignature":
			return s.text(&c.ThinkingSignature)
		case "data":
			return s.text(&c.Data)
		case "mimeType":
			return s.name(&c.MimeType)
		case "id":
			return s.text(&c.ID)
		case "name":
			return s.name(&c.Name)
		case "arguments":
			raw, ok := s.RawView()
			c.Arguments = s.arena.bytes(raw)
			return ok
		}
		return s.text(&c.ThoughtSignature)
	})
}

func (s *scanner) usage(u *llm.Usage) bool {
	return s.FieldsFold(usageKeys, func(k string) bool {
		switch k {
		case "input":
			return s.Int(&u.Input)
		case "output":
			return s.Int(&u.Output)
		case "cacheRead":
			return s.Int(&u.CacheRead)
		case "cacheWrite":
			return s.Int(&u.CacheWrite)
		case "totalTokens":
			return s.Int(&u.TotalTokens)
		}
		c := &u.Cost
		return s.Null() || s.FieldsFold(costKeys, func(k string) bool {
			switch k {
			case "input":
				return s.Float(&c.Input)
			case "output":
				return s.Float(&c.Output)
			case "cacheRead":
				return s.Float(&c.CacheRead)
			case "cacheWrite":
				return s.Float(&c.CacheWrite)
			}
			return s.Float(&c.Total)
		})
	})
}

// name reads a string (or null) that many lines repeat, interned.
func (s *scanner) name(dst *string) bool {
	if s.Null() {
		return true
	}
	raw, plain, ok := s.Quoted()
	switch {
	case !ok:
		return false
	case !plain || len(raw) > 64:
		*dst = jsonscan.Unquote(raw)
		return true
	}
	*dst = s.intern(raw)
	return true
}

// intern returns raw as a string, one copy for each distinct value (up
// to 1024 of them). A value is looked up first in a small table by its
// length and ends, then in the map: a file repeats a few names on every
// line, and comparing one string was cheaper than hashing it for the map
// (which was a twentieth of a long session's load).
func (s *scanner) intern(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	h := (uint(len(raw))*37 + uint(raw[0])*7 + uint(raw[len(raw)-1])) % uint(len(s.recent))
	if v := s.recent[h]; v == unsafeString(raw) {
		return v
	}
	v, ok := s.names[unsafeString(raw)]
	if !ok {
		v = string(raw)
		if s.names == nil {
			s.names = map[string]string{}
		}
		if len(s.names) < 1024 {
			s.names[v] = v
		}
	}
	s.recent[h] = v
	return v
}

// text reads a string (or null) that the entry keeps, into the arena.
func (s *scanner) text(dst *string) bool {
	if s.Null() {
		return true
	}
	raw, plain, ok := s.Quoted()
	if !ok {
		return false
	}
	*dst = s.arena.str(raw, plain)
	return true
}

// view reads a string (or null) without copying it: valid only until the
// line's buffer is reused. An escaped string is decoded into a copy.
func (s *scanner) view(dst *string) bool {
	if s.Null() {
		return true
	}
	raw, plain, ok := s.Quoted()
	switch {
	case !ok:
		return false
	case !plain:
		*dst = jsonscan.Unquote(raw)
	default:
		*dst = unsafeString(raw)
	}
	return true
}

// unsafeString is b as a string without a copy, for values that are
// looked up or parsed and never kept.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
