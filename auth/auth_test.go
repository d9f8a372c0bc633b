package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	keyA = "sk-test-AAAAAAAAAAAAAAAAAAAA1111"
	keyB = "sk-test-BBBBBBBBBBBBBBBBBBBB2222"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadMissingIsEmpty(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "auth.json"))
	if err != nil || f.Providers == nil || len(f.Providers) != 0 {
		t.Fatalf("Load = %+v, %v", f, err)
	}
}

func TestLoadRefusesReadableFile(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(`{"providers":{"openai":[{"id":"a","key":"`+keyA+`"}]}}`), 0o600)
			os.Chmod(path, mode)
			_, err := Load(path)
			var pe *PermError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInsecure) {
				t.Fatalf("err %v, want a PermError", err)
			}
			if want := "chmod 600 " + path; !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not say %q", err, want)
			}
			if strings.Contains(err.Error(), "AAAA") {
				t.Errorf("the error leaks the key: %v", err)
			}
		})
	}
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown field", `{"providers":{"openai":[{"id":"a","key":"k","token":"x"}]}}`, `unknown field "token"`},
		{"unknown top-level", `{"provider":{}}`, `unknown field "provider"`},
		{"not json", `{`, "unexpected EOF"},
		{"empty id", `{"providers":{"openai":[{"key":"k"}]}}`, "providers.openai[0]: id is empty"},
		{"both", `{"providers":{"openai":[{"id":"a","key":"k","keyEnv":"K"}]}}`, "exactly one of key and keyEnv"},
		{"neither", `{"providers":{"openai":[{"id":"a"}]}}`, "exactly one of key and keyEnv"},
		{"reserved id", `{"providers":{"openai":[{"id":"env:X","key":"k"}]}}`, "reserved"},
		{"slash in id", `{"providers":{"openai":[{"id":"a/b","key":"k"}]}}`, "no spaces or slashes"},
		{"bad env name", `{"providers":{"openai":[{"id":"a","keyEnv":"1X"}]}}`, "not an environment variable name"},
		{"duplicate", `{"providers":{"openai":[{"id":"a","key":"k"},{"id":"a","key":"j"}]}}`, `providers.openai[1]: id "a" is used twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(tt.body), 0o600)
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "auth: "+path) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSaveRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "auth.json")
	f := &File{}
	must(t, f.Add("openai", Credential{ID: "a", Key: keyA, Label: "work"}))
	must(t, f.Add("openai", Credential{ID: "b", KeyEnv: "MY_KEY"}))
	must(t, f.Save(path))
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("home created with mode %v", di.Mode())
	}
	g, err := Load(path)
	must(t, err)
	if got := g.Providers["openai"]; len(got) != 2 || got[0].Key != keyA || got[0].Label != "work" || got[1].KeyEnv != "MY_KEY" {
		t.Errorf("round trip %#v", got)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp"))
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestAddRemove(t *testing.T) {
	f := &File{}
	must(t, f.Add("openai", Credential{ID: "a", Key: keyA}))
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"duplicate", f.Add("openai", Credential{ID: "a", Key: keyB}), ErrExists},
		{"same id other provider", f.Add("groq", Credential{ID: "a", Key: keyB}), nil},
		{"remove unknown", f.Remove("openai", "zzz"), ErrNotFound},
		{"remove env", f.Remove("openai", "env:OPENAI_API_KEY"), ErrNotFound},
		{"remove", f.Remove("groq", "a"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.want) || (tt.want == nil && tt.err != nil) {
				t.Errorf("err %v, want %v", tt.err, tt.want)
			}
		})
	}
	if _, ok := f.Providers["groq"]; ok {
		t.Errorf("an emptied provider stays: %v", f.Providers)
	}
	if err := f.Add("a/b", Credential{ID: "x", Key: keyA}); err == nil {
		t.Errorf("provider with a slash accepted")
	}
}

func TestPoolOrder(t *testing.T) {
	f := &File{}
	must(t, f.Add("openai", Credential{ID: "a", Key: keyA}))
	must(t, f.Add("openai", Credential{ID: "b", KeyEnv: "B_KEY"}))
	must(t, f.Add("openai", Credential{ID: "unset", KeyEnv: "NOT_SET"}))
	getenv := env(map[string]string{"RALLY_API_KEY": "sk-rally-RRRRRRRRRRRRRRRR", "OPENAI_API_KEY": "sk-env-EEEEEEEEEEEEEEEE", "B_KEY": keyB})
	var ids []string
	for _, c := range f.Pool("openai", []string{"RALLY_API_KEY", "OPENAI_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY"}, getenv) {
		ids = append(ids, c.ID+"="+c.Key[len(c.Key)-4:]+"@"+c.Source())
	}
	want := "env:RALLY_API_KEY=RRRR@$RALLY_API_KEY env:OPENAI_API_KEY=EEEE@$OPENAI_API_KEY a=1111@auth.json b=2222@auth.json ($B_KEY)"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("pool\n got %s\nwant %s", got, want)
	}
}

// TestCredentialNeverPrintsKey covers every way a Credential can reach a
// log or an error by accident.
func TestCredentialNeverPrintsKey(t *testing.T) {
	c := Credential{ID: "a", Label: "work", Key: keyA}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "cred", c)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "cred", c)
	outs := map[string]string{
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", c),
		"%s": fmt.Sprintf("%s", c), "slog": logged.String(),
	}
	for name, out := range outs {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(out, "AAAA") || !strings.Contains(out, "a") {
				t.Errorf("%s printed %q", name, out)
			}
		})
	}
}

// TestUpdateConcurrent adds credentials from many goroutines at once; the
// lock means none is lost.
func TestUpdateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := Update(context.Background(), path, func(f *File) error {
				return f.Add("openai", Credential{ID: fmt.Sprint("k", i), Key: keyA})
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f, err := Load(path)
	must(t, err)
	if got := len(f.Providers["openai"]); got != n {
		t.Errorf("%d credentials after %d concurrent adds", got, n)
	}
}

func TestLockHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lock(context.Background(), path)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lock(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("lock while held with a cancelled context: %v", err)
	}
	unlock()
	unlock2, err := lock(context.Background(), path)
	must(t, err)
	unlock2()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuthIsBelowSession: auth sits beside llm (DESIGN §1); the session's
// Switcher interface is the session's, and auth satisfies it without
// importing session, the agent loop or the tools.
func TestAuthIsBelowSession(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, above := range []string{"session", "agent", "tool"} {
			if dep == "github.com/rally-agent/rally/"+above || strings.HasPrefix(dep, "github.com/rally-agent/rally/"+above+"/") {
				t.Errorf("auth depends on %s", dep)
			}
		}
	}
}
