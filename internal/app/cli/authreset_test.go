package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
)

// TestAuthListResets: rally auth list says when a marked key's usage
// limit resets, as the provider stated it (Mark.Reset), in the local time
// and zone of the clock; a block that was only a guess (no stated reset)
// shows "-", and no key is printed.
func TestAuthListResets(t *testing.T) {
	home := isolate(t)
	cet := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 2, 12, 47, 0, 0, cet)
	clock := func() time.Time { return now }
	keys := map[string]string{"work": testKeyA, "spare": testKeyB}
	for _, id := range []string{"work", "spare"} {
		if _, errOut, code := runAt(t, clock, "", "auth", "add", "openai", "--id", id, "--key", keys[id]); code != 0 {
			t.Fatalf("auth add %s: exit %d: %s", id, code, errOut)
		}
	}
	marks := &auth.FileMarks{Path: auth.MarksPath(home), Now: clock}
	stated := time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC) // tomorrow, 09:30 in CET
	for _, m := range []auth.Mark{
		{Provider: "openai", ID: "work", Key: auth.Fingerprint(testKeyA), Until: stated, Reset: stated, Reason: "usage limit"},
		{Provider: "openai", ID: "spare", Key: auth.Fingerprint(testKeyB), Until: now.Add(auth.DefaultBlock), Reason: "usage limit"},
	} {
		if err := marks.Block(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runAt(t, clock, "", "auth", "list")
	if code != 0 {
		t.Fatalf("auth list: exit %d: %s", code, errOut)
	}
	tests := []struct{ id, want string }{
		{"work", "openai work - auth.json …1111 blocked until Dec 3 09:30 (in 20h43m) Dec 3 09:30 CET"},
		{"spare", "openai spare - auth.json …2222 blocked until 13:47 (in 1h0m) -"},
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "PROVIDER ID LABEL SOURCE KEY STATUS RESETS" {
		t.Fatalf("auth list:\n%s", out)
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			for _, l := range lines[1:] {
				if f := strings.Fields(l); f[1] == tt.id {
					if got := strings.Join(f, " "); got != tt.want {
						t.Errorf("line %q, want %q", got, tt.want)
					}
					return
				}
			}
			t.Errorf("no line for %s:\n%s", tt.id, out)
		})
	}
	for _, m := range testKeyMiddles {
		if strings.Contains(out+errOut, m) {
			t.Errorf("a key leaked: %s%s", out, errOut)
		}
	}
}
