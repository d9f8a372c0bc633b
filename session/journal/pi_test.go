package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
)

// jPiSession is a session as pi writes it, typed by hand from the format of
// badlogic/pi-mono packages/coding-agent/docs/session.md and the entry
// types of packages/coding-agent/src/core/session-manager.ts: the header,
// 8-hex ids chained by parentId, ISO entry times and Unix-ms message times,
// a string user content, a tool result with pi's "details", a label, an
// abandoned branch (b2…) left by /tree with a branch_summary on the path
// taken, bashExecution and custom messages, a custom entry, a custom_message
// entry, a compaction with pi's "details", a session name and a model change.
const jPiSession = `{"type":"session","version":3,"id":"5b0c1f3e-8a2d-4c4e-9f10-2a3b4c5d6e7f","timestamp":"2025-01-05T10:00:00.000Z","cwd":"/home/me/proj"}
{"type":"model_change","id":"a1000001","parentId":null,"timestamp":"2025-01-05T10:00:00.100Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}
{"type":"thinking_level_change","id":"a1000002","parentId":"a1000001","timestamp":"2025-01-05T10:00:00.200Z","thinkingLevel":"off"}
{"type":"message","id":"a1000003","parentId":"a1000002","timestamp":"2025-01-05T10:00:01.000Z","message":{"role":"user","content":"List the files","timestamp":1736071201000}}
{"type":"message","id":"a1000004","parentId":"a1000003","timestamp":"2025-01-05T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Use bash.","thinkingSignature":"c2ln"},{"type":"toolCall","id":"toolu_01","name":"bash","arguments":{"command":"ls"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.00003,"output":0.000075,"cacheRead":0,"cacheWrite":0,"total":0.000105}},"stopReason":"toolUse","timestamp":1736071202000}}
{"type":"message","id":"a1000005","parentId":"a1000004","timestamp":"2025-01-05T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"toolu_01","toolName":"bash","content":[{"type":"text","text":"go.mod\nmain.go"}],"details":{"exitCode":0},"isError":false,"timestamp":1736071203000}}
{"type":"message","id":"a1000006","parentId":"a1000005","timestamp":"2025-01-05T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Two files."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":20,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":23,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1736071204000}}
{"type":"label","id":"a1000007","parentId":"a1000006","timestamp":"2025-01-05T10:00:05.000Z","targetId":"a1000003","label":"start"}
{"type":"message","id":"b2000001","parentId":"a1000007","timestamp":"2025-01-05T10:01:00.000Z","message":{"role":"user","content":[{"type":"text","text":"abandoned question"}],"timestamp":1736071260000}}
{"type":"message","id":"b2000002","parentId":"b2000001","timestamp":"2025-01-05T10:01:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"abandoned answer"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1736071261000}}
{"type":"branch_summary","id":"c3000001","parentId":"a1000007","timestamp":"2025-01-05T10:02:00.000Z","fromId":"b2000002","summary":"Asked something, dropped it."}
{"type":"message","id":"c3000002","parentId":"c3000001","timestamp":"2025-01-05T10:02:01.000Z","message":{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1736071321000}}
{"type":"message","id":"c3000003","parentId":"c3000002","timestamp":"2025-01-05T10:02:02.000Z","message":{"role":"bashExecution","command":"cat .env","output":"SECRET=1","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":1736071322000}}
{"type":"custom","id":"c3000004","parentId":"c3000003","timestamp":"2025-01-05T10:02:03.000Z","customType":"my-ext","data":{"count":42}}
{"type":"custom_message","id":"c3000005","parentId":"c3000004","timestamp":"2025-01-05T10:02:04.000Z","customType":"my-ext","content":"Injected note","display":true}
{"type":"message","id":"c3000006","parentId":"c3000005","timestamp":"2025-01-05T10:02:05.000Z","message":{"role":"bashExecution","command":"make","output":"","exitCode":2,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/out.log","timestamp":1736071325000}}
{"type":"compaction","id":"c3000007","parentId":"c3000006","timestamp":"2025-01-05T10:03:00.000Z","summary":"Listed files.","firstKeptEntryId":"a1000006","tokensBefore":12345,"details":{"readFiles":[],"modifiedFiles":[]}}
{"type":"session_info","id":"c3000008","parentId":"c3000007","timestamp":"2025-01-05T10:03:01.000Z","name":"File listing"}
{"type":"model_change","id":"c3000009","parentId":"c3000008","timestamp":"2025-01-05T10:03:02.000Z","provider":"openai","modelId":"gpt-4o"}
{"type":"message","id":"c3000010","parentId":"c3000009","timestamp":"2025-01-05T10:03:03.000Z","message":{"role":"custom","customType":"my-ext","content":[{"type":"text","text":"custom msg"}],"display":false,"timestamp":1736071383000}}
{"type":"message","id":"c3000011","parentId":"c3000010","timestamp":"2025-01-05T10:03:04.000Z","message":{"role":"user","content":"Thanks","timestamp":1736071384000}}
`

func jAt(iso string) int64 {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func TestJournalPiSession(t *testing.T) {
	p := filepath.Join(t.TempDir(), "2025-01-05T10-00-00-000Z_5b0c1f3e-8a2d-4c4e-9f10-2a3b4c5d6e7f.jsonl")
	if err := os.WriteFile(p, []byte(jPiSession), 0o600); err != nil {
		t.Fatal(err)
	}
	j, ld, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Warnings) != 0 {
		t.Errorf("warnings: %q", ld.Warnings)
	}
	if ld.ID != "5b0c1f3e-8a2d-4c4e-9f10-2a3b4c5d6e7f" || ld.Cwd != "/home/me/proj" || ld.Name != "File listing" ||
		ld.LastProvider != "openai" || ld.LastModel != "gpt-4o" {
		t.Errorf("loaded %q %q %q %q/%q", ld.ID, ld.Cwd, ld.Name, ld.LastProvider, ld.LastModel)
	}
	if len(ld.Entries) != 20 || ld.Entries[0].ParentID != "" || ld.Entries[9].ParentID != "a1000007" {
		t.Errorf("%d entries", len(ld.Entries))
	}
	if e := ld.Entries[4]; e.Message == nil || e.Message.Role != llm.ToolResult || !e.Timestamp.Equal(time.UnixMilli(jAt("2025-01-05T10:00:03Z"))) {
		t.Errorf("entry 4: %+v", e)
	}
	assistant := llm.Message{
		Role: llm.Assistant, Content: []llm.Content{llm.Text("Two files.")},
		API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4-5",
		Usage: &llm.Usage{Input: 20, Output: 3, TotalTokens: 23}, StopReason: llm.Stop, Timestamp: 1736071204000,
	}
	want := []llm.Message{
		jUser(compactionPrefix+"Listed files."+compactionSuffix, jAt("2025-01-05T10:03:00Z")),
		assistant,
		jUser(branchPrefix+"Asked something, dropped it."+branchSuffix, jAt("2025-01-05T10:02:00Z")),
		jUser("Ran `git status`\n```\nclean\n```", 1736071321000),
		jUser("Injected note", jAt("2025-01-05T10:02:04Z")),
		jUser("Ran `make`\n(no output)\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.log]", 1736071325000),
		jUser("custom msg", 1736071383000),
		jUser("Thanks", 1736071384000),
	}
	if d := cmp.Diff(want, ld.Messages); d != "" {
		t.Errorf("Messages (-want +got):\n%s", d)
	}

	// rally continues a pi session on its chain.
	id, err := j.AppendMessage(jUser("more", 1736071400000), false)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	ld, err = Load(p)
	if err != nil {
		t.Fatal(err)
	}
	last := ld.Entries[len(ld.Entries)-1]
	if last.ID != id || last.ParentID != "c3000011" || len(ld.Messages) != len(want)+1 {
		t.Errorf("appended %+v, %d messages", last, len(ld.Messages))
	}
}

// TestJournalPiVersion1 reads a version 1 file (no ids; compaction by
// index counting the header as 0), as session-manager.ts migrateV1ToV2
// describes it, and one of version 2 with the old hookMessage role.
func TestJournalPiVersion1(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"v1", `{"type":"session","id":"old-1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}
{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"u1","timestamp":1}}
{"type":"message","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a1"}],"stopReason":"stop","timestamp":2}}
{"type":"message","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"user","content":"u2","timestamp":3}}
{"type":"message","timestamp":"2024-12-03T14:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a2"}],"stopReason":"stop","timestamp":4}}
{"type":"compaction","timestamp":"2024-12-03T14:00:05.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":10}
{"type":"message","timestamp":"2024-12-03T14:00:06.000Z","message":{"role":"user","content":"u3","timestamp":6}}
`, []string{compactionPrefix + "S" + compactionSuffix, "u2", "a2", "u3"}},
		{"v2", `{"type":"session","version":2,"id":"old-2","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}
{"type":"message","id":"00000001","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"hookMessage","customType":"h","content":"hooked","display":true,"timestamp":1}}
{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"user","content":"u1","timestamp":2}}
`, []string{"hooked", "u1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(p, []byte(tc.file), 0o600)
			j, ld, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := jTexts(ld.Messages); !cmp.Equal(got, tc.want) || len(ld.Warnings) != 0 {
				t.Errorf("messages %q, want %q; warnings %q", got, tc.want, ld.Warnings)
			}
			for _, m := range ld.Messages {
				if m.Role != llm.User && m.Role != llm.Assistant {
					t.Errorf("role %q sent to the model", m.Role)
				}
			}
			// An append continues, and the file reads the same afterwards.
			j.AppendMessage(jUser("u4", 7), false)
			j.Close()
			ld, err = Load(p)
			if got := jTexts(ld.Messages); err != nil || !cmp.Equal(got, append(tc.want, "u4")) {
				t.Errorf("after append: %q, %v", got, err)
			}
		})
	}
}

func TestDir(t *testing.T) {
	wd, _ := os.Getwd()
	cases := []struct{ home, cwd, want string }{
		{"/h/.rally", "/home/me/proj", "/h/.rally/sessions/--home-me-proj--"},
		{"/h/.rally", "/home/me/proj/", "/h/.rally/sessions/--home-me-proj--"},
		{"/h/.rally", "/home/me/a/../proj", "/h/.rally/sessions/--home-me-proj--"},
		{"/h", "/", "/h/sessions/----"},
		{"/h", "/srv/my app:v2/x", "/h/sessions/--srv-my app-v2-x--"},
		{"/h", ".", "/h/sessions/" + cwdSlug(wd)},
	}
	for _, tc := range cases {
		if got := Dir(tc.home, tc.cwd); got != tc.want {
			t.Errorf("Dir(%q, %q) = %q, want %q", tc.home, tc.cwd, got, tc.want)
		}
	}
	for in, want := range map[string]string{`C:\Users\me`: "--C--Users-me--", `\\srv\share`: "---srv-share--"} {
		if got := cwdSlug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	if strings.ContainsAny(cwdSlug("/a/b:c\\d"), `/\:`) {
		t.Error("slug keeps a separator")
	}
}
