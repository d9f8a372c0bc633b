package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/rally-agent/rally/settings"
)

func (e *env) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := e.client.Get(e.url(path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post submits a form as the page itself would (same origin). Redirects
// are not followed, so the status is the save's own.
func (e *env) post(t *testing.T, form url.Values, header http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url("/settings"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.ts.URL)
	for k, v := range header {
		req.Header[k] = v
	}
	c := *e.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var versionRe = regexp.MustCompile(`name="_version" value="([^"]*)"`)

// load opens the settings page of file and returns a form holding its
// version, as a browser would submit it.
func (e *env) load(t *testing.T, file string) url.Values {
	t.Helper()
	code, body := e.get(t, "/settings?_file="+file)
	if code != http.StatusOK {
		t.Fatalf("GET /settings: %d %s", code, body)
	}
	m := versionRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no _version in the settings page")
	}
	return url.Values{"_file": {file}, "_version": {m[1]}}
}

func TestTokenRequired(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want int
	}{
		{"no token", func() *http.Request { r, _ := http.NewRequest("GET", e.ts.URL+"/settings", nil); return r }, 401},
		{"wrong token", func() *http.Request { r, _ := http.NewRequest("GET", e.ts.URL+"/settings?token=nope", nil); return r }, 401},
		{"wrong cookie", func() *http.Request {
			r, _ := http.NewRequest("GET", e.url("/sessions"), nil)
			r.AddCookie(&http.Cookie{Name: cookieName(r), Value: "nope"})
			return r
		}, 401},
		{"token in a POST query", func() *http.Request {
			r, _ := http.NewRequest("POST", e.ts.URL+"/settings?token="+e.srv.Token(), nil)
			return r
		}, 401},
		{"static files too", func() *http.Request { r, _ := http.NewRequest("GET", e.url("/static/style.css"), nil); return r }, 401},
		{"right token", func() *http.Request {
			r, _ := http.NewRequest("GET", e.ts.URL+"/sessions?token="+e.srv.Token(), nil)
			return r
		}, 303},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Do(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 303 {
				if loc := resp.Header.Get("Location"); loc != e.srv.Base()+"sessions" {
					t.Errorf("redirect to %q, want the address without the token", loc)
				}
				ck := resp.Cookies()
				if len(ck) != 1 || ck[0].Value != e.srv.Token() || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != e.srv.Base() {
					t.Errorf("cookie %+v", ck)
				}
			}
		})
	}
	// With the cookie (newEnv visited the token URL) every page opens.
	for _, p := range []string{"/settings", "/sessions", "/static/style.css"} {
		if code, _ := e.get(t, p); code != 200 {
			t.Errorf("GET %s with the cookie: %d", p, code)
		}
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"192.168.1.10:0", false},
		{"example.com:7878", false},
		{"127.0.0.1", false}, // no port
	} {
		t.Run(tc.addr, func(t *testing.T) {
			ln, err := Listen(context.Background(), tc.addr)
			if ln != nil {
				ln.Close()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("Listen(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
			}
			if !tc.ok && tc.addr != "127.0.0.1" && (!errors.Is(err, ErrNotLoopback) || !strings.Contains(err.Error(), "127.0.0.1")) {
				t.Errorf("error %q does not say the address is not loopback and what to use", err)
			}
		})
	}
}

func TestHostHeaderChecked(t *testing.T) {
	e := newEnv(t)
	req, _ := http.NewRequest("GET", e.url("/settings"), nil)
	req.Host = "attacker.example:80"
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("rebound Host: %d", resp.StatusCode)
	}
}

func TestCrossOriginPostRefused(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	writeFile(t, global, `{"retry": {"maxRetries": 2}}`+"\n")
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"other origin", http.Header{"Origin": {"http://evil.example"}}},
		{"cross-site fetch", http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		{"other port on loopback", http.Header{"Origin": {"http://127.0.0.1:1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := e.load(t, "global")
			form.Set("retry.maxRetries", "9")
			code, _ := e.post(t, form, tc.header)
			if code != http.StatusForbidden {
				t.Fatalf("status %d, want 403", code)
			}
			if got := readFile(t, global); got != `{"retry": {"maxRetries": 2}}`+"\n" {
				t.Fatalf("file written: %s", got)
			}
		})
	}
	// The same request from the page's own origin goes through.
	form := e.load(t, "global")
	form.Set("retry.maxRetries", "9")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("same-origin save: %d\n%s", code, body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/settings", "/sessions", "/nope"} {
		resp, err := e.client.Get(e.url(p))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", p, resp.Header)
		}
	}
}

func TestSaveSettings(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	writeFile(t, global, "{\n    \"mine\": {\"kept\": true},\n    \"retry\": {\"maxRetries\": 2}\n}\n")
	form := e.load(t, "global")
	form.Set("retry.maxRetries", "5")
	form.Set("providers.openai.timeoutMs", "12000")
	form.Set("providers.openai.maxRetries", "1")
	form.Set("retry.fallbackModels", "openrouter/anthropic/claude-sonnet-4\r\n\r\n")
	code, body := e.post(t, form, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(readFile(t, global)), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"mine":{"kept":true},"providers":{"openai":{"maxRetries":1,"timeoutMs":12000}},"retry":{"fallbackModels":["openrouter/anthropic/claude-sonnet-4"],"maxRetries":5}}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("file\n%s\nwant\n%s", b, want)
	}
	// Only changed values are written: the defaults stay out of the file.
	if strings.Contains(readFile(t, global), "baseDelayMs") || !strings.Contains(readFile(t, global), "\n    \"mine\"") {
		t.Errorf("file not kept as written:\n%s", readFile(t, global))
	}
	// The page now shows the values and where they come from.
	_, page := e.get(t, "/settings?_file=global")
	for _, s := range []string{`name="retry.maxRetries" value="5"`, `name="providers.openai.timeoutMs" value="12000"`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %s", s)
		}
	}
	// An empty value removes the key: the default applies again.
	form = e.load(t, "global")
	form.Set("retry.maxRetries", "")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("unset: %d\n%s", code, body)
	}
	if strings.Contains(readFile(t, global), "maxRetries\": 5") {
		t.Errorf("maxRetries still set:\n%s", readFile(t, global))
	}
}

func TestSaveProjectFile(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.src.Global.Path, `{"retry": {"baseDelayMs": 500}}`)
	form := e.load(t, "project")
	form.Set("retry.maxRetries", "7")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	if got := readFile(t, e.src.Project.Path); !strings.Contains(got, `"maxRetries": 7`) || strings.Contains(got, "baseDelayMs") {
		t.Fatalf("project file:\n%s", got)
	}
	// On the global tab the value set in the project file is shown as
	// coming from there, and cannot be changed in the global file.
	_, page := e.get(t, "/settings?_file=global")
	field := regexp.MustCompile(`<input id="f-retry.maxRetries"[^>]*>`).FindString(page)
	if !strings.Contains(field, `value="7"`) || !strings.Contains(field, "disabled") {
		t.Errorf("global tab: %s", field)
	}
	if !strings.Contains(page, "from .rally/settings.json") || !strings.Contains(page, `data-source="global"`) {
		t.Error("global tab does not name the sources")
	}
	form = e.load(t, "global")
	form.Set("retry.maxRetries", "1")
	if code, _ := e.post(t, form, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("changing a value the project file sets, in the global file: %d", code)
	}
}

// The page refuses what rally settings validate refuses, with its message
// next to the field, and writes nothing at all.
func TestSaveInvalidWritesNothing(t *testing.T) {
	const before = `{"retry": {"maxRetries": 2}}` + "\n"
	for _, tc := range []struct {
		name, key, value string
	}{
		{"out of range", "retry.maxRetries", "101"},
		{"not a number", "retry.maxRetries", "three"},
		{"fraction", "retry.maxRetries", "2.5"},
		{"bad enum", "retry.streaming", "sometimes"},
		{"bad fallback", "retry.fallbackModels", "no-slash"},
		{"unknown fallback provider", "retry.fallbackModels", "nosuch/model"},
		{"bad url", "providers.openai.baseUrl", "ftp://x"},
		{"cross-field", "retry.maxDelayMs", "10"},
		{"timeout zero", "providers.groq.idleTimeoutMs", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			global := e.src.Global.Path
			writeFile(t, global, before)
			form := e.load(t, "global")
			form.Set("providers.openai.timeoutMs", "12000") // valid, still not written
			form.Set(tc.key, tc.value)
			code, body := e.post(t, form, nil)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d\n%s", code, body)
			}
			if got := readFile(t, global); got != before {
				t.Fatalf("file written:\n%s", got)
			}
			// The message is the one the settings package gives for the
			// same edit, which is what rally settings validate prints.
			f, err := settings.ParseFile(e.src.Global, []byte(before))
			if err != nil {
				t.Fatal(err)
			}
			field := e.fieldOf(t, tc.key)
			raw, _ := field.parse(tc.value)
			if err := f.SetJSON(tc.key, raw); err != nil {
				t.Fatal(err)
			}
			_, _, err = settings.Merge(f)
			errs := settings.Errors(err)
			if len(errs) != 1 {
				t.Fatalf("settings.Merge: %v", err)
			}
			want := `<p class="error" data-for="` + tc.key + `">` + htmlEscape(errs[0].Error()) + `</p>`
			if !strings.Contains(body, want) {
				t.Errorf("page lacks the inline error %s", want)
			}
		})
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;", `'`, "&#39;").Replace(s)
}

// fieldOf returns the form field named key.
func (e *env) fieldOf(t *testing.T, key string) *field {
	t.Helper()
	sn := e.srv.readSnapshot()
	r, _ := http.NewRequest("GET", "/settings", nil)
	d, _, err := e.srv.settingsForm(r, sn, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Form.fields() {
		if f.Name == key {
			return f
		}
	}
	t.Fatalf("no field %s", key)
	return nil
}

func TestChangedOnDiskRefused(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	writeFile(t, global, `{"retry": {"maxRetries": 2}}`)
	form := e.load(t, "global")
	const edited = `{"retry": {"maxRetries": 4}, "defaultModel": "by-hand"}`
	writeFile(t, global, edited) // someone edits the file meanwhile
	form.Set("retry.maxRetries", "5")
	code, body := e.post(t, form, nil)
	if code != http.StatusConflict {
		t.Fatalf("status %d\n%s", code, body)
	}
	if !strings.Contains(body, changedMsg) || !strings.Contains(body, `<a id="reload" href="`+e.srv.Base()+`settings?_file=global">Reload</a>`) {
		t.Errorf("page lacks the message or the reload link:\n%s", body)
	}
	if got := readFile(t, global); got != edited {
		t.Fatalf("file overwritten: %s", got)
	}
	// A file created since the page loaded counts too.
	form = e.load(t, "project")
	writeFile(t, e.src.Project.Path, `{}`)
	form.Set("retry.maxRetries", "5")
	if code, body := e.post(t, form, nil); code != http.StatusConflict || !strings.Contains(body, ".rally/settings.json</b>: "+changedMsg) {
		t.Errorf("new project file: %d", code)
	}
}

func TestBrokenFileNotOverwritten(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	writeFile(t, global, `{"retry": {`)
	code, page := e.get(t, "/settings?_file=global")
	if code != 200 || !strings.Contains(page, "settings.json:1:11: unexpected end of JSON input") || strings.Contains(page, `id="save"`) {
		t.Fatalf("broken file page: %d", code)
	}
	form := e.load(t, "global")
	form.Set("retry.maxRetries", "5")
	if code, _ := e.post(t, form, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("save over a broken file: %d", code)
	}
	if readFile(t, global) != `{"retry": {` {
		t.Error("broken file overwritten")
	}
}

func TestKeysNeverAccepted(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnop0123456789"
	e := newEnv(t)
	global := e.src.Global.Path
	for _, tc := range []struct{ name, field string }{
		{"in the key variable", "providers.openai.apiKeyEnv"},
		{"in another field", "defaultModel"},
		{"as a field of its own", "providers.openai.apiKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := e.load(t, "global")
			form.Set(tc.field, key)
			code, body := e.post(t, form, nil)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d", code)
			}
			if strings.Contains(body, key) || strings.Contains(body, "abcdefghijklmnop") {
				t.Error("the key is echoed in the page")
			}
			if readFile(t, global) != "" {
				t.Error("file written")
			}
		})
	}
}

// Every setting has an input named by its JSON path: the form is built
// from the schema, so a new setting cannot be missing from it.
func TestFormHasEverySetting(t *testing.T) {
	e := newEnv(t)
	_, page := e.get(t, "/settings")
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`name="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		names[m[1]] = true
	}
	// The leaves of the default settings, which a different walk (the
	// settings types' JSON) than the form's (the schema) produces.
	var doc map[string]any
	b, _ := json.Marshal(settings.Default())
	json.Unmarshal(b, &doc)
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && prefix != "" && !strings.HasSuffix(prefix, ".cost") {
			for k, c := range m {
				walk(prefix+"."+k, c)
			}
			return
		}
		if !names[prefix] {
			t.Errorf("no input for %s", prefix)
		}
	}
	for k, v := range doc {
		walk(k, v)
	}
	// Beside them the per-provider settings that default to unset.
	for _, p := range []string{"providers.openai.maxRetries", "providers.anthropic.models", "$schema", "hooks"} {
		if !names[p] {
			t.Errorf("no input for %s", p)
		}
	}
	// Each provider's row has base URL, key variable, timeouts and max
	// retries side by side.
	row := regexp.MustCompile(`(?s)<tr><th scope="row">openai</th>.*?</tr>`).FindString(page)
	for _, col := range []string{"baseUrl", "apiKeyEnv", "timeoutMs", "idleTimeoutMs", "maxRetries"} {
		if !strings.Contains(row, `name="providers.openai.`+col+`"`) {
			t.Errorf("openai row lacks %s", col)
		}
	}
}

func TestAddProvider(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	form := e.load(t, "global")
	form.Set("_new.providers", "vllm")
	form.Set("_new.providers.api", "openai-completions")
	form.Set("_new.providers.timeoutMs", "5000")
	// No baseUrl: refused, next to the new row's baseUrl cell.
	code, body := e.post(t, form, nil)
	want := `<p class="error" data-for="_new.providers.baseUrl">~/.rally/settings.json: providers.vllm.baseUrl: is required for a provider that is not built in</p>`
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, want) {
		t.Fatalf("status %d; page lacks %s", code, want)
	}
	if !strings.Contains(body, `name="_new.providers" value="vllm"`) || readFile(t, global) != "" {
		t.Fatal("the new row lost what was typed, or the file was written")
	}
	form.Set("_new.providers.baseUrl", "http://127.0.0.1:8000/v1")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	var got map[string]map[string]map[string]any
	json.Unmarshal([]byte(readFile(t, global)), &got)
	if p := got["providers"]["vllm"]; p["api"] != "openai-completions" || p["baseUrl"] != "http://127.0.0.1:8000/v1" || p["timeoutMs"] != 5000.0 || len(p) != 3 {
		t.Errorf("file:\n%s", readFile(t, global))
	}
	// It is a row of its own now.
	_, page := e.get(t, "/settings")
	if !strings.Contains(page, `name="providers.vllm.baseUrl" value="http://127.0.0.1:8000/v1"`) {
		t.Error("no row for the new provider")
	}
	// A name that exists, or is not a provider name, is refused.
	for _, name := range []string{"openai", "has space"} {
		form := e.load(t, "global")
		form.Set("_new.providers", name)
		form.Set("_new.providers.api", "openai-completions")
		form.Set("_new.providers.baseUrl", "http://x/v1")
		if code, _ := e.post(t, form, nil); code != http.StatusUnprocessableEntity {
			t.Errorf("new provider %q: %d", name, code)
		}
	}
}

func TestInvalidFileOnDisk(t *testing.T) {
	e := newEnv(t)
	global, project := e.src.Global.Path, e.src.Project.Path
	writeFile(t, global, `{"retry": {"maxRetries": 500}}`)
	writeFile(t, project, `{"retry": {"streaming": "never"}}`)
	// Each file's problem is shown next to its field.
	_, page := e.get(t, "/settings?_file=global")
	for _, want := range []string{
		`data-for="retry.maxRetries">~/.rally/settings.json: retry.maxRetries: must be an integer from 0 to 100, got 500</p>`,
		`data-for="retry.streaming">.rally/settings.json: retry.streaming: must be one of &#34;restart&#34;, &#34;beforeOutput&#34;, &#34;resume&#34;, got &#34;never&#34;</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// The broken project file does not stop the global one from being
	// fixed, as with rally settings set.
	form := e.load(t, "global")
	form.Set("retry.maxRetries", "5")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("fixing the global file: %d\n%s", code, body)
	}
	if got := readFile(t, global); !strings.Contains(got, `"maxRetries": 5`) {
		t.Errorf("global file:\n%s", got)
	}
	// A save that leaves the file's own problem is refused, with it inline.
	form = e.load(t, "project")
	form.Set("retry.maxDelayMs", "70000")
	code, body := e.post(t, form, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, `data-for="retry.streaming">.rally/settings.json: retry.streaming: must be one of`) {
		t.Errorf("saving over the project file's problem: %d", code)
	}
}

// An invalid value in the file edited shows as it is, and choosing a valid
// one fixes it.
func TestFixInvalidValue(t *testing.T) {
	e := newEnv(t)
	project := e.src.Project.Path
	writeFile(t, project, `{"retry": {"streaming": "never", "maxRetries": 1}}`)
	_, page := e.get(t, "/settings?_file=project")
	if !strings.Contains(page, `name="retry.maxRetries" value="1"`) {
		t.Error("the invalid file's own values are not shown")
	}
	form := e.load(t, "project")
	form.Set("retry.streaming", "restart")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("fix: %d\n%s", code, body)
	}
	if got := readFile(t, project); !strings.Contains(got, `"streaming": "restart"`) || !strings.Contains(got, `"maxRetries": 1`) {
		t.Errorf("project file:\n%s", got)
	}
}

func TestListenPortInUse(t *testing.T) {
	ln, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(context.Background(), ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "--listen 127.0.0.1:0 picks a free port") {
		t.Fatalf("second listen on %s: %v", ln.Addr(), err)
	}
}

func TestKeyInFileNotShown(t *testing.T) {
	e := newEnv(t)
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
	writeFile(t, e.src.Global.Path, `{"defaultModel": "`+key+`"}`)
	_, page := e.get(t, "/settings")
	if strings.Contains(page, "abcdefghijklmnop") {
		t.Fatal("the key is on the page")
	}
	if !strings.Contains(page, "defaultModel: looks like an API key, so it is not shown") {
		t.Error("no word about the hidden value")
	}
}

// A map that starts empty (fleet budgets) still gets a row to add to.
func TestAddToEmptyTable(t *testing.T) {
	e := newEnv(t)
	form := e.load(t, "global")
	form.Set("_new.fleet.budgets", "openai")
	form.Set("_new.fleet.budgets.requestsPerMinute", "60")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	var got struct {
		Fleet struct{ Budgets map[string]map[string]int }
	}
	json.Unmarshal([]byte(readFile(t, e.src.Global.Path)), &got)
	if got.Fleet.Budgets["openai"]["requestsPerMinute"] != 60 {
		t.Errorf("file:\n%s", readFile(t, e.src.Global.Path))
	}
}
