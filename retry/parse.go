package retry

import (
	"encoding/json"
	"maps"
	"slices"
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
	// text is the lowercased body and every message found in it.
	text string
	// quotas holds lowercased quota identifiers (Gemini QuotaFailure).
	quotas []string
	// hints holds raw values of hint-bearing JSON fields, keyed by
	// lowercased field name ("retrydelay", "resets_in_seconds", …).
	hints map[string]string
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
	if v, at, ok := decodeJSON(f.Body); ok {
		// The text is what stands around the JSON value plus the messages
		// inside it, not the raw JSON: half the bytes to search, and no
		// key names to match by accident.
		text.WriteString(f.Body[:min(at, len(f.Body))])
		n := 0
		ft.walk(v, "", &text, &n)
	} else {
		text.WriteString(f.Body)
	}
	if ft.status == 0 {
		ft.status = leadingStatus(f.Body)
	}
	ft.text = strings.ToLower(text.String())
	return ft
}

// decodeJSON decodes the first JSON value in s. Bodies arrive bare, behind
// an SSE "data:" prefix, or behind an SDK's "429 " or "Error code: 429 - ",
// so it starts at the first brace or bracket.
func decodeJSON(s string) (v any, at int, ok bool) {
	i := strings.IndexAny(s, "{[")
	if i < 0 {
		return nil, 0, false
	}
	// Most bodies are exactly one JSON value; Unmarshal is the fast path.
	// A decoder reads the first value of one that has text after it.
	if json.Unmarshal([]byte(s[i:]), &v) == nil {
		return v, i, true
	}
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	if dec.Decode(&v) != nil {
		return nil, 0, false
	}
	// Text follows the value ("{…} (request id …) try again in 5s"): the
	// caller keeps the whole body as text.
	return v, len(s), true
}

func (ft *facts) walk(v any, key string, text *strings.Builder, n *int) {
	if *n++; *n > maxWalk {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		// Sorted, so that the same body always gives the same reason.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			ft.walk(v[k], strings.ToLower(k), text, n)
		}
	case []any:
		for _, c := range v {
			ft.walk(c, key, text, n)
		}
	case string:
		ft.field(key, v, text)
	case float64:
		num := strconv.FormatFloat(v, 'f', -1, 64)
		ft.field(key, num, text)
		switch key {
		case "code", "status", "status_code", "statuscode":
			if v >= 400 && v < 600 && ft.status == 0 {
				ft.status = int(v)
			}
		}
	}
}

func (ft *facts) field(key, val string, text *strings.Builder) {
	switch key {
	case "type", "code", "status", "__type", "error_type", "reason", "errortype", "@type":
		if _, err := strconv.Atoi(val); err != nil {
			ft.codes = append(ft.codes, strings.ToLower(val))
		}
	case "message", "error", "detail", "raw", "msg", "errormessage", "description":
		text.WriteByte('\n')
		text.WriteString(val)
		// OpenRouter and proxies nest a provider's JSON body as a string.
		if strings.ContainsAny(val, "{") {
			if v, _, ok := decodeJSON(val); ok {
				n := 0
				ft.walk(v, "", text, &n)
			}
		}
	case "quotaid", "quota_id", "quotametric", "quota_metric":
		ft.quotas = append(ft.quotas, strings.ToLower(val))
	case "retrydelay", "retry_delay", "resets_in_seconds", "resets_at", "retry_after", "retry_after_ms", "retryafter":
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
