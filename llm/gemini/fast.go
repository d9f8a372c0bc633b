package gemini

import "github.com/rally-agent/rally/internal/jsonscan"

// fastChunk decodes a streamed chunk into c the way encoding/json would,
// in one pass, or reports false for a chunk it leaves to encoding/json:
// one with a function call, an error, prompt feedback, or anything
// unusual. Text and thinking chunks, nearly all of a stream, take it.
func fastChunk(data []byte, c *chunk) bool {
	s := scan{jsonscan.New(data)}
	return s.FieldsFold(chunkKeys, func(k string) bool {
		switch k {
		case "candidates":
			return jsonscan.Array(&s.Scanner, &c.Candidates, s.candidate)
		case "usageMetadata":
			return s.usage(&c.UsageMetadata)
		}
		return s.Null() // error, promptFeedback: only when absent
	}) && s.End()
}

var (
	chunkKeys     = []string{"candidates", "usageMetadata", "promptFeedback", "error"}
	candidateKeys = []string{"content", "finishReason", "finishMessage"}
	contentKeys   = []string{"parts"}
	partKeys      = []string{"text", "thought", "thoughtSignature", "functionCall"}
	usageKeys     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount", "toolUsePromptTokenCount", "totalTokenCount"}
)

// scan is the fast decoder's scanner, with its readers added as methods
// (method values bound to it do not escape; see jsonscan.Array).
type scan struct{ jsonscan.Scanner }

func (s *scan) candidate(c *candidate) bool {
	return s.FieldsFold(candidateKeys, func(k string) bool {
		switch k {
		case "content":
			return s.Null() || s.FieldsFold(contentKeys, func(string) bool {
				return jsonscan.Array(&s.Scanner, &c.Content.Parts, s.part)
			})
		case "finishReason":
			return s.Text(&c.FinishReason)
		default:
			return s.Text(&c.FinishMessage)
		}
	})
}

func (s *scan) part(p *streamPart) bool {
	return s.FieldsFold(partKeys, func(k string) bool {
		switch k {
		case "text":
			return s.Text(&p.Text)
		case "thought":
			return s.Bool(&p.Thought)
		case "thoughtSignature":
			return s.Text(&p.ThoughtSignature)
		}
		return s.Null() // a functionCall goes to encoding/json
	})
}

func (s *scan) usage(u *usage) bool {
	return s.Null() || s.FieldsFold(usageKeys, func(k string) bool {
		switch k {
		case "promptTokenCount":
			return s.Int(&u.PromptTokenCount)
		case "candidatesTokenCount":
			return s.Int(&u.CandidatesTokenCount)
		case "thoughtsTokenCount":
			return s.Int(&u.ThoughtsTokenCount)
		case "cachedContentTokenCount":
			return s.Int(&u.CachedContentTokenCount)
		case "toolUsePromptTokenCount":
			return s.Int(&u.ToolUsePromptTokenCount)
		}
		return s.Int(&u.TotalTokenCount)
	})
}
