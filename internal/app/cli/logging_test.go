package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rally-agent/rally/auth"
)

// TestRPCOneLog: the RPC backend and every session it makes log through
// one logger, so rally.log is opened once per process (start-up strace
// showed it opened twice, once for the backend and once for its first
// session, and again at every new_session).
func TestRPCOneLog(t *testing.T) {
	isolate(t) // no key or project settings of the machine's reach the run
	f := runFlags{noSession: true}
	s := streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	rc, err := newRunConfig(s, &f)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	b, err := newRPCBackend(context.Background(), s, f, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if b.log == nil || b.current().log != b.log || rc.log != b.log {
		t.Fatalf("the backend logs to %p, its first session to %p, the run config has %p: want one logger", b.log, b.current().log, rc.log)
	}
	if _, err := b.newSession(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.current().log; got != b.log {
		t.Fatalf("after new_session the session logs to %p, the backend to %p: want one logger", got, b.log)
	}
}

// TestStartReadsAuthOnce: the first session of a run that chose its
// provider from auth.json uses the file as that choice read it (start-up
// read it five times, twelve with a key stored), and a later session
// reads it afresh, so a key added since is redacted too.
func TestStartReadsAuthOnce(t *testing.T) {
	home := isolate(t)
	store := func(key string) {
		t.Helper()
		body := `{"providers":{"openai":[{"id":"a","key":"` + key + `"}]}}`
		if err := os.WriteFile(auth.Path(home), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const first, second = "sk-first-0123456789abcdef", "sk-second-0123456789abcdef"
	store(first)
	f := runFlags{noSession: true}
	s := streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	rc, err := newRunConfig(s, &f)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	if rc.target.Provider != "openai" {
		t.Fatalf("target %q, want openai from auth.json", rc.target.Provider)
	}
	store(second) // after start-up's read: the first session must not see it
	env1, err := newRunEnv(context.Background(), s, &f, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer env1.close()
	if !slices.Contains(env1.keys, first) || slices.Contains(env1.keys, second) {
		t.Errorf("first session redacts %d keys, has the start-up key %v, the later one %v: want start-up's read only",
			len(env1.keys), slices.Contains(env1.keys, first), slices.Contains(env1.keys, second))
	}
	env2, err := newRunEnv(context.Background(), s, &f, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer env2.close()
	if !slices.Contains(env2.keys, second) {
		t.Errorf("second session does not redact the key stored after start-up: want auth.json read afresh")
	}
}
