package redact

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

const (
	openaiKey = "sk-proj-abcdefghijklmnop1234"
	// bareKey has no well-known prefix: only the known-key rule finds it.
	bareKey = "zzSECRETRALLYKEY0123456789999"
)

func TestSecrets(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// From llm/internal/wire's redactor.
		{"own key", "bad key " + openaiKey + " given", "bad key [redacted] given"},
		{"masked echo", "Incorrect API key provided: sk-proj-****************************1234. You can find", "Incorrect API key provided: [redacted]. You can find"},
		{"gemini key", "API key AIzaSyD-abcdefghijklmnopqrstuvwx not valid", "API key [redacted] not valid"},
		{"custom key", "token hunter2hunter2 leaked", "token [redacted] leaked"},
		{"prose kept", "ask-me and task-force and sk-1", "ask-me and task-force and sk-1"},
		// From auth's redactor.
		{"key shaped", "key sk-proj-abcdefghijklmnop echoed", "key [redacted] echoed"},
		{"google", "key AIzaSyA1234567890abcdef", "key [redacted]"},
		{"prose prefix", "ask-me about sk-", "ask-me about sk-"},
		{"shortest shaped", "x sk-qwertyui y", "x [redacted] y"},
		{"too short to be shaped", "x sk-qwertyu y", "x sk-qwertyu y"},
		{"shaped after a dash", "x-sk-qwertyuiop", "x-[redacted]"},
		{"not at a word start", "risk-management-framework", "risk-management-framework"},
		// Partial echoes of a known key (issue 12, item 8).
		{"partial echo", `{"error":"bad key zzSECRETRALLYK***999"}`, `{"error":"bad key [redacted]"}`},
		{"eight bytes", "saw zzSECRET here", "saw [redacted] here"},
		{"seven bytes kept", "saw zzSECRE here", "saw zzSECRE here"},
		{"middle of the key", "k=ALLYKEY012&x=1", "k=[redacted]&x=1"},
		{"suffix", "ends in ...KEY0123456789999.", "ends in ...[redacted]."},
		{"inside a word", "prefix_zzSECRETRALLY_suffix end", "[redacted] end"},
		{"two echoes", "a zzSECRETR b 456789999 c", "a [redacted] b [redacted] c"},
		{"echo then shaped", "zzSECRETRALLYK sk-abcdefghijkl", "[redacted] [redacted]"},
		{"header value", "Bearer " + openaiKey, "Bearer [redacted]"},
		{"nothing", "no secret here at all", "no secret here at all"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Secrets(tt.in, openaiKey, "hunter2hunter2", bareKey, "short")
			if got != tt.want {
				t.Errorf("Secrets = %q, want %q", got, tt.want)
			}
			if ref := reference(tt.in, openaiKey, "hunter2hunter2", bareKey, "short"); ref != got {
				t.Errorf("reference = %q", ref)
			}
			for _, k := range []string{openaiKey, bareKey} {
				if r := leak(got, k); r != "" {
					t.Errorf("%q still holds %q of a key", got, r)
				}
			}
		})
	}
}

func TestShortKeysIgnored(t *testing.T) {
	if got := Secrets("a key of abc is fine", "abc", ""); got != "a key of abc is fine" {
		t.Errorf("Secrets = %q", got)
	}
}

func TestLine(t *testing.T) {
	const keyA = "sk-ant-api03-first-key-0000000000aaaa"
	long := strings.Repeat("word ", 100)
	tests := []struct{ name, in, secret, want string }{
		{"known secret", "bad key " + keyA + " here", keyA, "bad key [redacted] here"},
		{"key shaped", "key sk-proj-abcdefghijklmnop echoed", "", "key [redacted] echoed"},
		{"google", "key AIzaSyA1234567890abcdef", "", "key [redacted]"},
		{"prose", "ask-me about sk-", "", "ask-me about sk-"},
		{"one line", "a\n  b\tc", "", "a b c"},
		{"clipped", long, "", strings.TrimSpace(long)[:160] + "…"},
		{"clipped by runes", strings.Repeat("é", 200), "", strings.Repeat("é", 160) + "…"},
		{"partial echo", "limit for zzSECRETRALLYK***999\nreached", bareKey, "limit for [redacted] reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in, tt.secret); got != tt.want {
				t.Errorf("Line = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHeaderAndURLError(t *testing.T) {
	clean := http.Header{"X-Request-Id": {"req_1"}}
	if got := Header(clean, openaiKey); got["X-Request-Id"][0] != "req_1" {
		t.Errorf("clean header changed: %v", got)
	}
	echo := http.Header{"X-Debug": {"auth=Bearer " + openaiKey}, "X-Partial": {"k=" + bareKey[:12] + "…"}, "X-Request-Id": {"req_1"}}
	got := Header(echo, openaiKey, bareKey)
	if leak(got.Get("X-Debug"), openaiKey) != "" || leak(got.Get("X-Partial"), bareKey) != "" || got.Get("X-Request-Id") != "req_1" {
		t.Errorf("redacted header %v", got)
	}
	if !strings.Contains(echo.Get("X-Debug"), openaiKey) {
		t.Error("the response's own header was changed")
	}
	err := URLError(&url.Error{Op: "Post", URL: "http://proxy.example/v1?key=" + openaiKey, Err: io.ErrUnexpectedEOF}, openaiKey)
	if strings.Contains(err.Error(), "abcdefghijklmnop") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v", err)
	}
	plain := &url.Error{Op: "Post", URL: "http://proxy.example/v1", Err: io.EOF}
	if URLError(plain, openaiKey) != error(plain) {
		t.Error("an error without a secret was replaced")
	}
}

func TestNoAllocationWithoutSecret(t *testing.T) {
	body := strings.Repeat(`{"error":{"message":"The server is overloaded","type":"overloaded_error"}} `, 20)
	if n := testing.AllocsPerRun(50, func() { Secrets(body, openaiKey, bareKey) }); n != 0 {
		t.Errorf("%v allocations for a body without a secret", n)
	}
}

// TestLongWordIsLinear: a word made of many echoes is one span, found in
// one pass, not one pass per echo.
func TestLongWordIsLinear(t *testing.T) {
	word := strings.Repeat(bareKey, 1<<15) // ~1 MB without a break
	got := Secrets("x "+word+" y", bareKey)
	if got != "x [redacted] y" {
		t.Errorf("Secrets = %.80q…", got)
	}
}

// leak returns a run of minRun bytes of key that s holds, or "".
func leak(s, key string) string {
	for i := 0; i+minRun <= len(key); i++ {
		if w := key[i : i+minRun]; strings.Contains(s, w) {
			return w
		}
	}
	return ""
}

// shapedRef is the key-shaped rule as a regular expression: a prefix at a
// word start (group 2), then 8 or more key characters.
var shapedRef = regexp.MustCompile(`(^|[^A-Za-z0-9_])((?:sk-|sk_|AIza|gsk_|xai-|pk-|rk-)[A-Za-z0-9_*-]{8,})`)

// reference is Secrets written the obvious, slow way, for the fuzz target
// to compare against: mark every byte of every 8-byte window found in a
// key, spread the marks over the words they touch, mark the key-shaped
// tokens, and replace each marked run.
func reference(text string, keys ...string) string {
	secret := make([]bool, len(text))
	for i := 0; i+minRun <= len(text); i++ {
		for _, k := range keys {
			if len(k) >= minRun && strings.Contains(k, text[i:i+minRun]) {
				for j := i; j < i+minRun; j++ {
					secret[j] = true
				}
			}
		}
	}
	for i := 1; i < len(text); i++ {
		if secret[i-1] && isKeyByte(text[i]) {
			secret[i] = true
		}
	}
	for i := len(text) - 2; i >= 0; i-- {
		if secret[i+1] && isKeyByte(text[i]) {
			secret[i] = true
		}
	}
	for _, m := range shapedRef.FindAllStringSubmatchIndex(text, -1) {
		for j := m[4]; j < m[5]; j++ {
			secret[j] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if !secret[i] {
			b.WriteByte(text[i])
			continue
		}
		b.WriteString(Redacted)
		for i+1 < len(text) && secret[i+1] {
			i++
		}
	}
	return b.String()
}

func FuzzSecrets(f *testing.F) {
	f.Add("bad key zzSECRETRALLYK***999 given", bareKey)
	f.Add("Incorrect API key provided: sk-proj-****1234", openaiKey)
	f.Add("x-sk-abcdefghijk and gsk_aaaaaaaaaaaaaaa", "")
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaa")
	f.Add("sk-ab sk-abcdefghij-sk-", "sk-abcdefghij")
	f.Fuzz(func(t *testing.T, text, key string) {
		got, want := Secrets(text, key), reference(text, key)
		if got != want {
			t.Fatalf("Secrets(%q, %q)\n got %q\nwant %q", text, key, got, want)
		}
	})
}

// benchBodies are error bodies as providers send them, clean and with
// echoes, of growing size.
func benchBodies() map[string]string {
	clean := `{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000. Please try again in 1.898s.","type":"tokens","code":"rate_limit_exceeded"}}`
	echo := `{"error":{"message":"Incorrect API key provided: zzSECRETRALLYK***999. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`
	return map[string]string{
		"clean-200B": clean,
		"echo-200B":  echo,
		"clean-64KB": strings.Repeat(clean, 64<<10/len(clean)),
		"clean-1MB":  strings.Repeat(clean, 1<<20/len(clean)),
		"echo-1MB":   strings.Repeat(echo, 1<<20/len(echo)),
	}
}

func BenchmarkSecrets(b *testing.B) {
	for name, body := range benchBodies() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Secrets(body, openaiKey, bareKey)
			}
		})
	}
}
