package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestFullDiskIsVisible runs rally with its session on a 64 KiB disk that
// a tool fills and a later tool empties again. The failed saves are
// announced (session_error in --mode json, a line on stderr in both
// modes), the session goes on in memory (the model still gets the tool
// result the disk refused, and the answer arrives), rally exits 1 saying
// the session was not fully saved, and the file has no torn line: every line is whole
// and it loads without a warning.
func TestFullDiskIsVisible(t *testing.T) {
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			home := isolate(t)
			disk := proctest.SmallDisk(t, "64k")
			fake := newRecorded(t,
				llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":` + quote("head -c 1000000 /dev/zero > "+disk+"/fill 2>/dev/null; seq 1 3000") + `}`}}},
				llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_2", Name: "bash", Arguments: `{"command":` + quote("rm "+disk+"/fill; echo freed") + `}`}}},
				llmtest.Step{Text: "All done."})
			cmd, out, errb := rallyIn(t, home, "--session-dir", disk, "--mode", mode, "--api", "openai-completions", "--base-url", fake.url+"/v1", "--model", "m", "-p", "fill the disk")
			cmd.Wait()
			stderr := errb.String()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, out, stderr)
			}
			if !strings.Contains(stderr, "rally: the session file was not saved (save message): journal: append to "+disk) ||
				!strings.Contains(stderr, "no space left on device; the session goes on in memory") ||
				!strings.Contains(stderr, "rally: the session was not fully saved: session: save message: ") {
				t.Errorf("stderr:\n%s", stderr)
			}
			switch mode {
			case "text":
				if !strings.HasSuffix(out.String(), "All done.\n") {
					t.Errorf("stdout %q", out)
				}
			case "json":
				var saw bool
				for _, line := range strings.Split(out.String(), "\n") {
					var e struct{ Type, Op, Error string }
					if json.Unmarshal([]byte(line), &e) == nil && e.Type == "session_error" {
						saw = true
						if e.Op != "save message" || !strings.Contains(e.Error, "no space left on device") {
							t.Errorf("session_error %s", line)
						}
					}
				}
				if !saw || !strings.Contains(out.String(), `"text":"All done."`) {
					t.Errorf("stdout:\n%s", out)
				}
			}
			reqs := fake.requests()
			if len(reqs) != 3 || !strings.Contains(reqs[1], `2999\n3000`) {
				t.Fatalf("%d requests; the second lacks the tool result kept in memory", len(reqs))
			}

			files, _ := journal.List(disk)
			if len(files) != 1 {
				t.Fatalf("session files %q", files)
			}
			b, _ := os.ReadFile(files[0])
			for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Errorf("line %d is torn: %.80q", i+1, line)
				}
			}
			ld, err := journal.Load(files[0])
			if err != nil || len(ld.Warnings) != 0 {
				t.Fatalf("load: %v, warnings %q", err, ld.Warnings)
			}
			last := ld.Messages[len(ld.Messages)-1]
			if last.TextOf() != "All done." || bytes.Contains(b, []byte(`2999\n3000`)) {
				t.Errorf("file: last message %q; holds the refused tool result: %v", last.TextOf(), bytes.Contains(b, []byte(`2999\n3000`)))
			}
		})
	}
}
