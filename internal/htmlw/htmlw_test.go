package htmlw

import (
	"html/template"
	"strings"
	"testing"
)

// oracle is html/template writing a value in each context the Writer
// has: the Writer must produce the same bytes (tests only; the binary
// never executes a template).
var oracle = template.Must(template.New("").Parse(
	`<p>{{.}}</p>|<textarea>{{.}}</textarea>|<i title="{{.}}"></i>|<a href="{{.}}"></a>|<a href="/s/{{.}}"></a>|<a href="/s?f={{.}}"></a>|<a href="#e-{{.}}"></a>`))

func viaWriter(s string) string {
	var w Writer
	w.Raw(`<p>`)
	w.Text(s)
	w.Raw(`</p>|<textarea>`)
	w.Text(s)
	w.Raw(`</textarea>|<i title="`)
	w.Attr(s)
	w.Raw(`"></i>|<a href="`)
	w.URL(s)
	w.Raw(`"></a>|<a href="/s/`)
	w.URLPath(s)
	w.Raw(`"></a>|<a href="/s?f=`)
	w.URLQuery(s)
	w.Raw(`"></a>|<a href="#e-`)
	w.URLQuery(s)
	w.Raw(`"></a>`)
	return string(w.Bytes())
}

func viaTemplate(t testing.TB, s string) string {
	var b strings.Builder
	if err := oracle.Execute(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostile is what a session file, a settings file or a request may hold.
var hostile = []string{
	"",
	"plain words",
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`' onmouseover='alert(1)`,
	`a & b &amp; c`,
	"nul\x00byte",
	"bad utf-8 \xff\xfe end",
	"é ü 日本 🎉 \u2028\u202e",
	`javascript:alert(1)`,
	`JaVaScRiPt:alert(1)`,
	` javascript:alert(1)`,
	`data:text/html,<script>alert(1)</script>`,
	`vbscript:x`,
	`http://example.com/a b?c=d&e=f#g`,
	`HTTPS://x.test/%41%zz%4`,
	`mailto:a@b.c`,
	`/sessions/../etc/passwd`,
	`a/b:c`,
	`x?y=1&z=2#frag`,
	`100% + 50%`,
	"tab\there\nnewline\r",
	`{{.}} ${x} \u003c`,
	`</textarea><script>x</script>`,
	`</title><script>x</script>`,
	`(paren) [bracket] {brace} *star* !bang $dollar ;semi ,comma @at =eq`,
}

func TestSameAsHTMLTemplate(t *testing.T) {
	for _, s := range hostile {
		t.Run(s, func(t *testing.T) {
			if got, want := viaWriter(s), viaTemplate(t, s); got != want {
				t.Fatalf("value %q\n got: %s\nwant: %s", s, got, want)
			}
		})
	}
}

// TestNoMarkupEscapes: whatever the value, it never closes the element
// or attribute it is in, and a scheme that runs code never survives in
// an href.
func TestNoMarkupEscapes(t *testing.T) {
	tests := []struct {
		name  string
		write func(*Writer, string)
	}{
		{"text", (*Writer).Text},
		{"attr", (*Writer).Attr},
		{"url", (*Writer).URL},
		{"url path", (*Writer).URLPath},
		{"url query", (*Writer).URLQuery},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range hostile {
				var w Writer
				tt.write(&w, s)
				out := string(w.Bytes())
				if strings.ContainsAny(out, `<>"'`+"\x00") {
					t.Errorf("%q written as %q", s, out)
				}
			}
		})
	}
	for _, s := range []string{"javascript:alert(1)", "JAVASCRIPT:x", "data:text/html,x", "vbscript:x"} {
		var w Writer
		w.URL(s)
		if got := string(w.Bytes()); got != "#ZgotmplZ" {
			t.Errorf("URL(%q) = %q, want #ZgotmplZ", s, got)
		}
	}
}

func TestNumbers(t *testing.T) {
	var w Writer
	w.Int(-42)
	w.Raw(" ")
	w.F1(12.345)
	w.Raw(" ")
	w.F1(-0.04)
	if got := string(w.Bytes()); got != "-42 12.3 -0.0" {
		t.Fatalf("got %q", got)
	}
}

func FuzzSameAsHTMLTemplate(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := viaWriter(s), viaTemplate(t, s); got != want {
			t.Fatalf("value %q\n got: %s\nwant: %s", s, got, want)
		}
	})
}
