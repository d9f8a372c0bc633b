package wire

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnop1234"
	tests := []struct{ name, in, want string }{
		{"own key", "bad key " + key + " given", "bad key [redacted] given"},
		{"masked echo", "Incorrect API key provided: sk-proj-****************************1234. You can find", "Incorrect API key provided: [redacted]. You can find"},
		{"gemini key", "API key AIzaSyD-abcdefghijklmnopqrstuvwx not valid", "API key [redacted] not valid"},
		{"custom key", "token hunter2hunter2 leaked", "token [redacted] leaked"},
		{"prose kept", "ask-me and task-force and sk-1", "ask-me and task-force and sk-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in, key, "hunter2hunter2")
			if got != tt.want {
				t.Errorf("Redact = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "abcdefghijklmnop") {
				t.Errorf("key material left in %q", got)
			}
		})
	}
}

func TestRedactHeaderAndURLError(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnop1234"
	clean := http.Header{"X-Request-Id": {"req_1"}}
	if got := RedactHeader(clean, key); got["X-Request-Id"][0] != "req_1" {
		t.Errorf("clean header changed: %v", got)
	}
	echo := http.Header{"X-Debug": {"auth=Bearer " + key}, "X-Request-Id": {"req_1"}}
	got := RedactHeader(echo, key)
	if strings.Contains(got.Get("X-Debug"), "abcdefghijklmnop") || got.Get("X-Request-Id") != "req_1" {
		t.Errorf("redacted header %v", got)
	}
	if !strings.Contains(echo.Get("X-Debug"), key) {
		t.Error("the response's own header was changed")
	}
	err := RedactURLError(&url.Error{Op: "Post", URL: "http://proxy.example/v1?key=" + key, Err: io.ErrUnexpectedEOF}, key)
	if strings.Contains(err.Error(), "abcdefghijklmnop") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v", err)
	}
}
