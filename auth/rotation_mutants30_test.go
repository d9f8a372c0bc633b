package auth

import (
	"context"
	"testing"
	"time"
)

// TestSwitchToTheReplacedKey (a mutant that lived, issue 30 third round:
// rotation.go `c.Key == from.cred.Key`): when the user replaces an
// exhausted credential's key under the same id while the session runs, a
// usage limit on the old key switches to the new one (the credentials
// are read again at the switch), since only the old key is marked.
func TestSwitchToTheReplacedKey(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.creds["openai"] = []Credential{{ID: "a", Key: keyA}}
	rot := r.rotation()
	start := must2(rot.Start(ctx, "openai", "m"))
	const newKey = "sk-test-NNNNNNNNNNNNNNNNNNNN4444"
	r.creds["openai"] = []Credential{{ID: "a", Key: newKey}}
	to, ok := rot.Switch(ctx, start, report(usageLimit("limit reached"), time.Hour))
	if got := describe(to, ok); got != "a openai/m 4444" {
		t.Errorf("after the old key's limit: %s, want a with its new key", got)
	}
}
