package journal

import (
	"strings"

	"github.com/rally-agent/rally/llm"
)

// decodeEntry reads an entry line in one pass: its fields and, for a
// message entry, the message. ok is false when the line needs
// encoding/json (anything unusual: a key in another case, a legacy
// field, a pi role whose own fields the context needs, bad JSON); the
// caller then decodes it that way, which also words the warning.
//
// f.Timestamp shares the line's bytes: it is only to be parsed.
func (s *scanner) entry(line []byte) (f entryFields, m *llm.Message, ok bool) {
	s.reset(line)
	s.object(func(k string) {
		switch k {
		case "type":
			f.Type = s.name()
		case "id":
			f.ID = s.str()
		case "parentId":
			if !s.null() {
				p := s.str()
				f.ParentID = &p
			}
		case "timestamp":
			f.Timestamp = s.view()
		case "message":
			if s.next() != '{' {
				s.fail()
				return
			}
			m = new(llm.Message)
			s.message(m)
		case "retried":
			f.Retried = s.bool()
		case "summary":
			f.Summary = s.str()
		case "firstKeptEntryId":
			f.FirstKeptEntryID = s.str()
		case "provider":
			f.Provider = s.name()
		case "modelId":
			f.ModelID = s.name()
		case "name":
			f.Name = s.str()
		default:
			s.other(k, entryKeys)
		}
	})
	s.end()
	if s.bad || m != nil && !plainRole(m.Role) {
		return entryFields{}, nil, false
	}
	return f, m, true
}

// The keys that encoding/json would match, in any case, for an entry, a
// message, a content block and usage. A key the scanner does not decode
// itself that matches one of these gives up.
var (
	entryKeys   = []string{"type", "id", "parentId", "timestamp", "message", "retried", "summary", "firstKeptEntryId", "firstKeptEntryIndex", "provider", "modelId", "name", "content"}
	messageKeys = []string{"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "toolCallId", "toolName", "isError", "timestamp"}
	blockKeys   = []string{"type", "text", "thinking", "thinkingSignature", "data", "mimeType", "id", "name", "arguments", "thoughtSignature"}
	usageKeys   = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "total"}
)

// other skips the value of a key the decoder does not read, unless
// encoding/json would read it.
func (s *scanner) other(k string, known []string) {
	for _, w := range known {
		if strings.EqualFold(k, w) {
			s.fail()
			return
		}
	}
	s.skip(0)
}

// plainRole reports whether a message of role r goes to the context as it
// is decoded: pi's other roles need fields of their own (contextMessage).
func plainRole(r llm.Role) bool {
	switch r {
	case llm.User, llm.Assistant, llm.ToolResult, "custom", "hookMessage":
		return true
	}
	return false
}

// message reads a message as llm.Message.UnmarshalJSON does.
func (s *scanner) message(m *llm.Message) {
	s.object(func(k string) {
		switch k {
		case "role":
			m.Role = llm.Role(s.name())
		case "content":
			m.Content = nil
			switch s.next() {
			case '"':
				m.Content = []llm.Content{llm.Text(s.str())}
			case '[':
				m.Content = []llm.Content{}
				s.array(func() {
					m.Content = append(m.Content, llm.Content{})
					s.block(&m.Content[len(m.Content)-1])
				})
			case 'n':
				s.lit("null")
			default:
				s.fail()
			}
		case "api":
			m.API = s.name()
		case "provider":
			m.Provider = s.name()
		case "model":
			m.Model = s.name()
		case "usage":
			if s.null() {
				m.Usage = nil
				return
			}
			if m.Usage == nil {
				m.Usage = new(llm.Usage)
			}
			s.usage(m.Usage)
		case "stopReason":
			m.StopReason = llm.StopReason(s.name())
		case "errorMessage":
			m.ErrorMessage = s.str()
		case "toolCallId":
			m.ToolCallID = s.str()
		case "toolName":
			m.ToolName = s.name()
		case "isError":
			m.IsError = s.bool()
		case "timestamp":
			m.Timestamp = s.int()
		default:
			s.other(k, messageKeys)
		}
	})
}

func (s *scanner) block(c *llm.Content) {
	if s.next() != '{' {
		s.fail() // encoding/json leaves a null element zero; rally never writes one
		return
	}
	s.object(func(k string) {
		switch k {
		case "type":
			c.Type = s.name()
		case "text":
			c.Text = s.str()
		case "thinking":
			c.Thinking = s.str()
		case "thinkingSignature":
			c.ThinkingSignature = s.str()
		case "data":
			c.Data = s.str()
		case "mimeType":
			c.MimeType = s.name()
		case "id":
			c.ID = s.str()
		case "name":
			c.Name = s.name()
		case "arguments":
			c.Arguments = s.raw()
		case "thoughtSignature":
			c.ThoughtSignature = s.str()
		default:
			s.other(k, blockKeys)
		}
	})
}

func (s *scanner) usage(u *llm.Usage) {
	s.object(func(k string) {
		switch k {
		case "input":
			u.Input = int(s.int())
		case "output":
			u.Output = int(s.int())
		case "cacheRead":
			u.CacheRead = int(s.int())
		case "cacheWrite":
			u.CacheWrite = int(s.int())
		case "totalTokens":
			u.TotalTokens = int(s.int())
		case "cost":
			c := &u.Cost
			s.object(func(k string) {
				switch k {
				case "input":
					c.Input = s.float()
				case "output":
					c.Output = s.float()
				case "cacheRead":
					c.CacheRead = s.float()
				case "cacheWrite":
					c.CacheWrite = s.float()
				case "total":
					c.Total = s.float()
				default:
					s.other(k, usageKeys)
				}
			})
		default:
			s.other(k, usageKeys)
		}
	})
}
