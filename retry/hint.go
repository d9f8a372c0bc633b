package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxHint is the longest wait a hint may state and still be believed. Longer
// values (and negative or unparsable ones) are ignored: the policy then
// backs off on its own schedule instead of trusting nonsense.
const MaxHint = 31 * 24 * time.Hour

// Hint returns how long the server asked us to wait before trying again, or
// 0 when it said nothing usable. now anchors absolute times (HTTP dates,
// epoch values, "resets at …"). Sources, first match wins: retry-after-ms;
// retry-after (seconds or HTTP date); x-ratelimit-reset-requests and
// -tokens durations; anthropic-ratelimit-*-reset timestamps;
// x-ratelimit-reset(-ms) epoch or relative values; then the body's phrases
// and structured fields.
func Hint(f Failure, now time.Time) time.Duration {
	if d := headerHint(f.Header, now); d > 0 {
		return d
	}
	return bodyHint(parse(f), now)
}

func valid(d time.Duration) time.Duration {
	if d <= 0 || d > MaxHint {
		return 0
	}
	return d
}

func headerHint(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if d := valid(seconds(v, time.Millisecond)); d > 0 {
			return d
		}
	}
	if v := h.Get("retry-after"); v != "" {
		if d := valid(seconds(v, time.Second)); d > 0 {
			return d
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := valid(t.Sub(now)); d > 0 {
				return d
			}
		}
	}
	for _, k := range []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"} {
		if d := valid(duration(h.Get(k))); d > 0 {
			return d
		}
	}
	if d := anthropicReset(h, now); d > 0 {
		return d
	}
	if v := h.Get("x-ratelimit-reset-ms"); v != "" {
		if d := valid(epochOr(v, now, time.Millisecond)); d > 0 {
			return d
		}
	}
	if v := h.Get("x-ratelimit-reset"); v != "" {
		if d := valid(epochOr(v, now, time.Second)); d > 0 {
			return d
		}
	}
	return 0
}

// anthropicReset reads anthropic-ratelimit-{requests,tokens,input-tokens,
// output-tokens}-reset. The limit whose remaining count is 0 is the one that
// was hit; without that, the earliest future reset is taken, and a later
// 429 will say more.
func anthropicReset(h http.Header, now time.Time) time.Duration {
	var best time.Duration
	for _, kind := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		v := h.Get("anthropic-ratelimit-" + kind + "-reset")
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			continue
		}
		d := valid(t.Sub(now))
		if d == 0 {
			continue
		}
		if h.Get("anthropic-ratelimit-"+kind+"-remaining") == "0" {
			return d
		}
		if best == 0 || d < best {
			best = d
		}
	}
	return best
}

// seconds parses a plain decimal number of units ("2", "1.5").
func seconds(v string, unit time.Duration) time.Duration {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 || x > float64(MaxHint/unit) {
		return 0
	}
	return time.Duration(x * float64(unit))
}

// epochOr reads a reset that is either an epoch time or a relative count of
// units, told apart by magnitude: above 1e12 epoch milliseconds, above 1e9
// epoch seconds, else relative.
func epochOr(v string, now time.Time, unit time.Duration) time.Duration {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		return 0
	}
	switch {
	case x > 1e14:
		return 0
	case x > 1e12:
		return time.UnixMilli(int64(x)).Sub(now)
	case x > 1e9:
		return time.Unix(int64(x), 0).Sub(now)
	}
	return seconds(v, unit)
}

// units maps the unit words found in hints to durations.
var units = []struct {
	word string
	d    time.Duration
}{
	// Longer words first so "ms" is not read as "m" followed by junk.
	{"milliseconds", time.Millisecond}, {"millisecond", time.Millisecond}, {"ms", time.Millisecond},
	{"seconds", time.Second}, {"second", time.Second}, {"secs", time.Second}, {"sec", time.Second}, {"s", time.Second},
	{"minutes", time.Minute}, {"minute", time.Minute}, {"mins", time.Minute}, {"min", time.Minute}, {"m", time.Minute},
	{"hours", time.Hour}, {"hour", time.Hour}, {"hrs", time.Hour}, {"hr", time.Hour}, {"h", time.Hour},
	{"days", 24 * time.Hour}, {"day", 24 * time.Hour}, {"d", 24 * time.Hour},
}

// duration parses durations as providers write them: "1s", "6m0s",
// "7m12.864s", "20ms", "~5 min", "2 hours", "1h2m3s", "34s", "1.898s".
// A bare number is seconds. It returns 0 for anything else.
func duration(s string) time.Duration {
	d, n := scanDuration(s)
	if n == 0 {
		return 0
	}
	return d
}

// scanDuration reads a duration at the start of s and reports how many
// bytes it used (0 if none).
func scanDuration(s string) (time.Duration, int) {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '~' || s[i] == '\t') {
			i++
		}
	}
	skip()
	var total float64
	parts, end := 0, 0
	for {
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			break
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		// "1.898s." ends a sentence: the last dot is not part of the number.
		x, err := strconv.ParseFloat(strings.TrimRight(s[i:j], "."), 64)
		if err != nil {
			return 0, 0
		}
		j = i + len(strings.TrimRight(s[i:j], "."))
		k := j
		for k < len(s) && s[k] == ' ' {
			k++
		}
		unit := time.Duration(0)
		for _, u := range units {
			if strings.HasPrefix(strings.ToLower(s[k:min(len(s), k+len(u.word))]), u.word) &&
				(k+len(u.word) == len(s) || !isLetter(s[k+len(u.word)])) {
				unit, k = u.d, k+len(u.word)
				break
			}
		}
		if unit == 0 {
			if parts > 0 {
				break
			}
			// A bare number: seconds.
			unit, k = time.Second, j
		}
		total += x * float64(unit)
		parts++
		i, end = k, k
		if unit == time.Second && k == j {
			break
		}
		// "1 hour 2 minutes" and "1h2m": allow a space between parts.
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i < len(s) && strings.HasPrefix(strings.ToLower(s[i:]), "and ") {
			i += 4
		}
	}
	if parts == 0 || total <= 0 || total > float64(MaxHint) {
		return 0, 0
	}
	return time.Duration(total), end
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// bodyPhrases introduce a relative wait in a message.
var bodyPhrases = []string{
	"try again in", "retry in", "retry after", "please wait", "reset after",
	"resets in", "reset in", "wait for", "retry-after:", "try again after",
	"come back in",
}

// absPhrases introduce an absolute reset time in a message. Claude Code
// writes "resets 4:50am (Europe/Rome)" without "at".
var absPhrases = []string{"resets at", "reset at", "try again at", "available again at", "resets "}

func bodyHint(ft facts, now time.Time) time.Duration {
	// Structured fields first: Gemini RetryInfo "retryDelay": "34s", Codex
	// "resets_in_seconds": 3600, "resets_at": epoch.
	for _, k := range []string{"retrydelay", "retry_delay", "retryafter", "retry_after"} {
		if v, ok := ft.hints[k]; ok {
			if d := valid(duration(v)); d > 0 {
				return d
			}
		}
	}
	if v, ok := ft.hints["retry_after_ms"]; ok {
		if d := valid(seconds(v, time.Millisecond)); d > 0 {
			return d
		}
	}
	// Codex "resets_in_seconds": 3600; Hugging Face's loading models
	// "estimated_time": 20.0.
	for _, k := range []string{"resets_in_seconds", "estimated_time"} {
		if v, ok := ft.hints[k]; ok {
			if d := valid(seconds(v, time.Second)); d > 0 {
				return d
			}
		}
	}
	if v, ok := ft.hints["resets_at"]; ok {
		if d := valid(epochOr(v, now, time.Second)); d > 0 {
			return d
		}
	}
	t := ft.text
	// A RetryInfo inside a JSON-escaped string that did not decode (a proxy
	// re-wrapped Google's body and cut or double-escaped it):
	// …\"retryDelay\": \"34s\"…, or a body a Python client printed as a
	// dict: {'error': …, 'estimated_time': 20.0}.
	for _, k := range []string{"retrydelay", "retry_delay", "estimated_time"} {
		if d := escapedField(t, k); d > 0 {
			return d
		}
	}
	for _, p := range bodyPhrases {
		for i := 0; i < len(t); {
			j := strings.Index(t[i:], p)
			if j < 0 {
				break
			}
			i += j + len(p)
			if d, n := scanDuration(t[i:]); n > 0 && valid(d) > 0 {
				return d
			}
		}
	}
	if now.IsZero() {
		return 0 // relative waits only (statedWait)
	}
	for _, p := range absPhrases {
		if j := strings.Index(t, p); j >= 0 {
			if d := valid(absTime(strings.TrimSpace(t[j+len(p):]), now)); d > 0 {
				return d
			}
		}
	}
	return 0
}

// escapedField reads a duration that follows key inside escaped JSON text,
// skipping the backslashes, quotes, colon and spaces between them.
func escapedField(t, key string) time.Duration {
	for i := 0; ; {
		j := strings.Index(t[i:], key)
		if j < 0 {
			return 0
		}
		at := i + j
		i = at + len(key)
		if at > 0 && (isLetter(t[at-1]) || t[at-1] == '_') {
			continue // "totalRetryDelay" is the client's own retries, not a wait
		}
		k := i
		for k < len(t) && (t[k] == '\\' || t[k] == '"' || t[k] == '\'' || t[k] == ':' || t[k] == ' ') {
			k++
		}
		if k > i {
			if d, n := scanDuration(t[k:]); n > 0 && valid(d) > 0 {
				return d
			}
		}
	}
}

// absTime reads a time at the start of s: RFC 3339, an HTTP date, a
// "2006-01-02 15:04:05" UTC time, or an epoch number. s is lowercased;
// time.Parse matches month and day names without regard to case.
func absTime(s string, now time.Time) time.Duration {
	s = strings.TrimLeft(s, " :")
	tok := s
	if i := strings.IndexAny(tok, " ,;)\"'\n"); i >= 0 {
		tok = tok[:i]
	}
	tok = strings.TrimRight(tok, ".")
	if t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(tok)); err == nil {
		return t.Sub(now)
	}
	if len(s) >= 29 {
		if t, err := http.ParseTime(s[:29]); err == nil {
			return t.Sub(now)
		}
	}
	if len(s) >= 19 {
		if t, err := time.Parse(time.DateTime, s[:19]); err == nil {
			return t.Sub(now)
		}
	}
	if len(tok) >= 10 {
		if d := epochOr(tok, now, time.Second); d != 0 {
			return d
		}
	}
	return clockTime(s, now)
}

// clockTime reads a wall-clock reset as subscription clients print it,
// "4:50am (europe/rome)", "8pm (america/new_york)", "10:57 pm gmt-3",
// "9:30 am", and returns the wait until its next occurrence. The zone is an
// IANA name in parentheses, UTC/GMT with an optional offset in hours, or
// absent (then now's own zone). An unknown zone name (no zone database on
// this machine, or a made-up name) gives 0: the time is not guessed.
func clockTime(s string, now time.Time) time.Duration {
	h, m, sec, n := clock(s)
	if n == 0 {
		return 0
	}
	loc := now.Location()
	rest := strings.TrimLeft(s[n:], " ")
	switch {
	case strings.HasPrefix(rest, "("):
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return 0
		}
		name := rest[1:end]
		l, err := time.LoadLocation(ianaCase(name))
		if err != nil {
			return 0
		}
		loc = l
	case strings.HasPrefix(rest, "utc"), strings.HasPrefix(rest, "gmt"):
		off := 0
		if r := rest[3:]; len(r) >= 2 && (r[0] == '+' || r[0] == '-') && '0' <= r[1] && r[1] <= '9' {
			off = int(r[1] - '0')
			if len(r) >= 3 && '0' <= r[2] && r[2] <= '9' {
				off = off*10 + int(r[2]-'0')
			}
			if off > 14 {
				return 0
			}
			if r[0] == '-' {
				off = -off
			}
		}
		loc = time.FixedZone(rest[:3], off*3600)
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), h, m, sec, 0, loc)
	if !t.After(now) {
		t = time.Date(local.Year(), local.Month(), local.Day()+1, h, m, sec, 0, loc)
	}
	return t.Sub(now)
}

// clock reads "4:50am", "8pm", "10:57 pm", "21:30", "10:00:30" at the start of s and
// returns the 24-hour time (seconds 0 unless given) and the bytes used (0 if none).
func clock(s string) (h, m, sec, n int) {
	i := 0
	for i < len(s) && i < 2 && '0' <= s[i] && s[i] <= '9' {
		h = h*10 + int(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, 0, 0, 0
	}
	minutes := false
	if i+2 < len(s) && s[i] == ':' && '0' <= s[i+1] && s[i+1] <= '5' && '0' <= s[i+2] && s[i+2] <= '9' {
		m = int(s[i+1]-'0')*10 + int(s[i+2]-'0')
		i += 3
		minutes = true
		// Seconds, when given, count: "10:00:30 UTC" at 10:00:00 is in
		// 30 s, not (with them dropped and the time passed) tomorrow.
		if i+2 < len(s) && s[i] == ':' && '0' <= s[i+1] && s[i+1] <= '5' && '0' <= s[i+2] && s[i+2] <= '9' {
			sec = int(s[i+1]-'0')*10 + int(s[i+2]-'0')
			i += 3
		}
	}
	j := i
	if j < len(s) && s[j] == ' ' {
		j++
	}
	switch {
	case strings.HasPrefix(s[j:], "am"), strings.HasPrefix(s[j:], "pm"):
		if h < 1 || h > 12 || (j+2 < len(s) && isLetter(s[j+2])) {
			return 0, 0, 0, 0
		}
		if h == 12 {
			h = 0
		}
		if s[j] == 'p' {
			h += 12
		}
		return h, m, sec, j + 2
	case minutes && h < 24 && (i == len(s) || !isWordByte(s[i])):
		return h, m, sec, i
	}
	return 0, 0, 0, 0
}

// ianaCase restores the case of a lowercased IANA zone name
// ("america/new_york" → "America/New_York"), which the zone database
// needs on case-sensitive file systems.
func ianaCase(name string) string {
	b := []byte(name)
	up := true
	for i, c := range b {
		if up && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}
