package openai

import "testing"

func TestMessageTooLarge(t *testing.T) {
	for name, c := range tested {
		t.Run(name, c.MessageTooLarge)
	}
}

func TestNoGzip(t *testing.T) {
	for name, c := range tested {
		t.Run(name, c.NoGzip)
	}
}
