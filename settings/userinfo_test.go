package settings

import (
	"strings"
	"testing"
)

// A URL setting never holds a secret (issue 24 defect 6): fleet.redis no
// password, a provider's baseUrl no user or password; the message does
// not repeat it.
func TestURLSettingsRefuseUserInfo(t *testing.T) {
	for _, tc := range []struct {
		doc, path string
		ok        bool
	}{
		{`{"providers": {"acme": {"api": "openai-completions", "baseUrl": "https://me:s3cretpass@acme.example/v1"}}}`, "providers.acme.baseUrl", false},
		{`{"providers": {"acme": {"api": "openai-completions", "baseUrl": "https://s3cretpass@acme.example/v1"}}}`, "providers.acme.baseUrl", false},
		{`{"providers": {"acme": {"api": "openai-completions", "baseUrl": "https://acme.example/v1"}}}`, "", true},
		{`{"fleet": {"redis": "redis://rally:s3cretpass@127.0.0.1:6379/0"}}`, "fleet.redis", false},
		{`{"fleet": {"redis": "redis://rally@127.0.0.1:6379/0"}}`, "", true}, // an ACL user, its password in passwordEnv
	} {
		t.Run(tc.doc, func(t *testing.T) {
			f, err := ParseFile(Source{Name: "s.json"}, []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Check()
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.path+": must not hold") {
				t.Fatalf("error %v, want one at %s", err, tc.path)
			}
			if strings.Contains(err.Error(), "s3cretpass") {
				t.Fatalf("the message repeats the secret: %v", err)
			}
		})
	}
}
