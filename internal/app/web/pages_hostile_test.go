package web

import (
	"strings"
	"testing"
)

// The pages are written by htmlw, not html/template (issue 25: method
// dead-code elimination). These pin, byte for byte, how hostile values
// from a session file and a settings file come out in each context the
// pages have: element text, attribute values, a link's fragment and a
// link's query. The bytes are html/template's, so a page reads as it did.

const breakout = `x" onmouseover="alert(1)`

// hostileIDSession is a session whose entry ids and model name try to
// leave the attribute and the link they are written into.
func hostileIDSession(id string) *fixture {
	j := newFixture(id)
	j.user(j.at(0), "hello")
	j.lines = append(j.lines,
		`{"type":"message","id":`+js(breakout)+`,"parentId":null,"timestamp":`+js(iso(j.at(20)))+
			`,"message":{"role":"assistant","content":[],"provider":"p</code><script>alert(2)</script>","model":"m'><b>",`+
			`"stopReason":"error","errorMessage":"503 </span><script>alert(3)</script>","timestamp":`+js(j.at(10).UnixMilli())+`}}`,
		`{"type":"custom","id":"c1","parentId":null,"timestamp":`+js(iso(j.at(30)))+`,"customType":"</p><i>&amp;</i>"}`)
	return j
}

func TestPagesHostileSession(t *testing.T) {
	e := newEnv(t)
	name := hostileIDSession("55555555-5555-4555-8555-555555555555").write(t, e.sessions)
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatalf("GET: %d\n%s", code, page)
	}
	tests := []struct{ context, want string }{
		{"id attribute", `<article id="e-x&#34; onmouseover=&#34;alert(1)" class=`},
		{"link fragment (timeline bar)", `<a href="#e-x%22%20onmouseover%3d%22alert%281%29"><rect class="call failed"`},
		{"link fragment (failure list)", `<li><a href="#e-x%22%20onmouseover%3d%22alert%281%29">`},
		{"text (model)", `<code class="model">p&lt;/code&gt;&lt;script&gt;alert(2)&lt;/script&gt;/m&#39;&gt;&lt;b&gt;</code>`},
		{"text (error)", `<span class="err">503 &lt;/span&gt;&lt;script&gt;alert(3)&lt;/script&gt;</span>`},
		{"svg title", `<title>p&lt;/code&gt;&lt;script&gt;`},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			if !strings.Contains(page, tt.want) {
				t.Errorf("page lacks %s", tt.want)
			}
		})
	}
	for _, bad := range []string{breakout, "<script", "'><b>", "<i>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
}

func TestPagesHostileSettings(t *testing.T) {
	const evil = `"><script>alert(1)</script>`
	const esc = `&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;`
	tests := []struct{ context, file, want string }{
		{"text (error banner)", `{"providers":{` + js("v"+evil) + `:{}}}`,
			`<li>~/.rally/settings.json: providers: key &#34;v\` + esc + `&#34;: must be`},
		{"attribute (input value)", `{"providers":{"local":{"baseUrl":` + js("http://h/"+evil) + `}}}`,
			`name="providers.local.baseUrl" value="http://h/` + esc + `"`},
		{"textarea", `{"tools":{"allowEnv":[` + js("A</textarea>"+evil) + `]}}`,
			`placeholder="one per line">A&lt;/textarea&gt;` + esc + `</textarea>`},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			e := newEnv(t)
			writeFile(t, e.src.Global.Path, tt.file)
			code, page := e.get(t, "/settings?_file=global")
			if code != 200 {
				t.Fatalf("GET: %d\n%s", code, page)
			}
			if !strings.Contains(page, tt.want) {
				t.Errorf("page lacks %s", tt.want)
			}
			if strings.Contains(page, "<script") || strings.Contains(page, evil) {
				t.Error("page holds the script unescaped")
			}
		})
	}
}
