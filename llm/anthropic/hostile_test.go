package anthropic

import "testing"

func TestMessageTooLarge(t *testing.T) { tested.MessageTooLarge(t) }
func TestNoGzip(t *testing.T)          { tested.NoGzip(t) }
