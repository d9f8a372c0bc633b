package llm

// ImageTokens is what one image is assumed to cost in a context: its
// base64 length says nothing about it, and providers bill images at a
// roughly fixed size.
const ImageTokens = 1200

// EstimateTokens guesses the tokens of messages that carry no usage: about
// four characters a token (text, thinking, tool calls and their
// arguments), ImageTokens an image, and a few tokens of framing a message.
// It is the one estimate: the session's compaction cut and budget, its
// get_session_stats context usage and the fleet's token budgets all come
// from it.
func EstimateTokens(ms []Message) int {
	n := 0
	for i := range ms {
		n += MessageTokens(&ms[i])
	}
	return n
}

// MessageTokens is EstimateTokens of one message.
func MessageTokens(m *Message) int {
	chars, images := 0, 0
	for _, c := range m.Content {
		switch c.Type {
		case ImageType:
			images++
		default:
			chars += len(c.Text) + len(c.Thinking) + len(c.Name) + len(c.Arguments)
		}
	}
	return TextTokens(chars) + images*ImageTokens + 4
}

// TextTokens is the estimate for n bytes of text: about four a token.
func TextTokens(n int) int { return (n + 3) / 4 }
