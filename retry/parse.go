package retry

import (
	"strconv"
	"strings"
)

// facts is what the classifier and the hint parser read out of a Failure:
// structured fields from a JSON body (whatever the provider's shape) and
// the lowercased text of every message.
type facts struct {
	status int
	// codes holds lowercased error type, code and status values.
	codes []string
	// text is the body and every message found in it, lowercased and with
	// each run of whitespace folded into one space.
	text string
	// found is the set of dictionary phrases that occur in text.
	found found
	// quotas holds lowercased quota identifiers (Gemini QuotaFailure).
	quotas []string
	// hints holds raw values of hint-bearing JSON fields, keyed by
	// lowercased field name ("retrydelay", "resets_in_seconds", …).
	hints map[string]string
	// nCtx and nPrompt are llama.cpp's n_ctx and n_prompt_tokens fields:
	// the window and the request's size, when an error carries them.
	nCtx, nPrompt int
}

// maxWalk bounds how much of a hostile body is walked.
const maxWalk = 512

func parse(f Failure) facts {
	var ft facts
	ft.status = f.Status
	add := func(s string) {
		if s != "" {
			ft.codes = append(ft.codes, strings.ToLower(s))
		}
	}
	add(f.Type)
	add(f.Code)
	if f.Header != nil {
		// Bedrock names the error in a header: "ThrottlingException:http://…".
		if t := f.Header.Get("x-amzn-errortype"); t != "" {
			add(strings.SplitN(t, ":", 2)[0])
		}
		// … and its event streams in an ":exception-type" message header.
		add(f.Header.Get(":exception-type"))
	}
	var text strings.Builder
	if v, at, ok := findJSON(f.Body); ok {
		// The text is what stands around the JSON value plus the messages
		// inside it, not the raw JSON: half the bytes to search, and no
		// key names to match by accident.
		text.WriteString(f.Body[:at])
		ft.walkJSON(v, &text)
	} else {
		text.WriteString(f.Body)
	}
	if ft.status == 0 {
		ft.status = leadingStatus(f.Body)
	}
	ft.text = normalize(text.String())
	ft.found = dict.scan(ft.text)
	return ft
}

// findJSON finds the first JSON value in s. Bodies arrive bare, behind an
// SSE "data:" prefix, or behind an SDK's "429 " or "Error code: 429 - ", so
// it starts at the first brace or bracket. at is where the text around the
// value ends: the value's start when only whitespace follows it, else the
// end of s ("{…} (request id …) try again in 5s" keeps the whole body as
// text).
func findJSON(s string) (v string, at int, ok bool) {
	i := jsonStart(s)
	if i < 0 {
		return "", 0, false
	}
	n, ok := jsonValue(s[i:])
	if !ok {
		return "", 0, false
	}
	v = s[i : i+n]
	if strings.TrimLeft(s[i+n:], " \t\r\n") == "" {
		return v, i, true
	}
	return v, len(s), true
}

// jsonStart finds where an error body's JSON starts: the first brace, or
// the first bracket that opens a list of objects or lists (Vertex wraps its
// error in one). A bracket before a number is prose: "Range of input
// length should be [1, 30000]" keeps its numbers as text.
func jsonStart(s string) int {
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], "{[")
		if j < 0 {
			return -1
		}
		i += j
		if s[i] == '{' {
			return i
		}
		if k := strings.TrimLeft(s[i+1:], " \t\r\n"); k != "" && (k[0] == '{' || k[0] == '[') {
			return i
		}
		i++
	}
	return -1
}

// number handles a JSON number field: its text for hint fields, and an
// HTTP status in a code or status field.
func (ft *facts) number(key, raw string, text *strings.Builder) {
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return
	}
	ft.field(key, strconv.FormatFloat(v, 'f', -1, 64), text)
	switch key {
	case "code", "status", "status_code", "statuscode":
		if v >= 400 && v < 600 && ft.status == 0 {
			ft.status = int(v)
		}
	case "n_ctx":
		if v > 0 && v <= maxWindow {
			ft.nCtx = int(v)
		}
	case "n_prompt_tokens":
		if v > 0 && v <= maxWindow {
			ft.nPrompt = int(v)
		}
	}
}

func (ft *facts) field(key, val string, text *strings.Builder) {
	switch key {
	case "type", "code", "status", "__type", "error_type", "reason", "errortype", "@type":
		if _, err := strconv.Atoi(val); err != nil {
			ft.codes = append(ft.codes, strings.ToLower(val))
		}
	case "message", "error", "detail", "details", "raw", "msg", "errormessage", "description":
		text.WriteByte('\n')
		// OpenRouter and proxies nest a provider's JSON body as a string:
		// its fields are read, and its text stands once, as the top-level
		// body's does (findJSON keeps the whole string when text follows
		// the value).
		if strings.ContainsAny(val, "{") {
			if v, at, ok := findJSON(val); ok {
				text.WriteString(val[:at])
				ft.walkJSON(v, text)
				return
			}
		}
		text.WriteString(val)
	case "quotaid", "quota_id", "quotametric", "quota_metric":
		ft.quotas = append(ft.quotas, strings.ToLower(val))
	case "retrydelay", "retry_delay", "resets_in_seconds", "resets_at", "retry_after", "retry_after_ms", "retryafter", "estimated_time":
		if ft.hints == nil {
			ft.hints = map[string]string{}
		}
		if _, dup := ft.hints[key]; !dup {
			ft.hints[key] = val
		}
	}
}

// leadingStatus reads an HTTP status that an SDK put in front of a message:
// "429 You exceeded…", "Error code: 429 - {…}", "HTTP 503: …",
// "status 500". Only the start counts: a number later in a message is not a
// status.
func leadingStatus(s string) int {
	s = strings.TrimSpace(s)
	for _, p := range []string{"error code:", "http error", "http", "status code", "status", "error"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = strings.TrimLeft(s[len(p):], " :")
			break
		}
	}
	if len(s) < 3 {
		return 0
	}
	if len(s) > 3 && isWordByte(s[3]) {
		return 0
	}
	n, err := strconv.Atoi(s[:3])
	if err != nil || n < 400 || n > 599 {
		return 0
	}
	return n
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
