package wire

import (
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a secret in text.
const Redacted = "[redacted]"

// keyPrefixes start the API keys of well-known providers. A token that
// begins with one of them is a key even when it is not ours (a proxy may
// echo the upstream key) or is partly masked ("sk-abc***xyz").
var keyPrefixes = []string{"sk-", "sk_", "AIza", "gsk_", "xai-", "pk-", "rk-"}

// Redact removes secrets from text that came back from a provider (an error
// body, a message): the given keys wherever they appear, and any token
// shaped like a well-known provider key.
func Redact(text string, keys ...string) string {
	for _, k := range keys {
		if len(k) >= 8 {
			text = strings.ReplaceAll(text, k, Redacted)
		}
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		p := matchPrefix(text, i)
		if p == 0 {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i + p
		for j < len(text) && isKeyByte(text[j]) {
			j++
		}
		if j-i < 12 { // "sk-" in prose, not a key
			b.WriteString(text[i:j])
		} else {
			b.WriteString(Redacted)
		}
		i = j
	}
	return b.String()
}

func matchPrefix(s string, i int) int {
	if i > 0 && isKeyByte(s[i-1]) {
		return 0
	}
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s[i:], p) {
			return len(p)
		}
	}
	return 0
}

func isKeyByte(c byte) bool {
	return c == '-' || c == '_' || c == '*' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// RedactURLError keeps secrets out of a transport error: a *url.Error
// quotes the request URL, which may carry a key in its query for some
// proxies.
func RedactURLError(err error, keys ...string) error {
	if ue, ok := err.(*url.Error); ok {
		if red := Redact(ue.URL, keys...); red != ue.URL {
			return &url.Error{Op: ue.Op, URL: red, Err: ue.Err}
		}
	}
	return err
}

// RedactHeader returns h, or a redacted copy if a value holds a secret (a
// proxy may echo the key in a header).
func RedactHeader(h http.Header, keys ...string) http.Header {
	for _, v := range h {
		for _, x := range v {
			if Redact(x, keys...) != x {
				return redactAll(h, keys)
			}
		}
	}
	return h
}

func redactAll(h http.Header, keys []string) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		for _, x := range v {
			out[k] = append(out[k], Redact(x, keys...))
		}
	}
	return out
}
