package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestSessionsCommand(t *testing.T) {
	home := isolate(t)
	out, _, code := run(t, "", "sessions")
	if code != 0 || !strings.HasPrefix(out, "no sessions in this directory yet") {
		t.Fatalf("empty: exit %d, %q", code, out)
	}
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1}}`)
	if _, errOut, code := run(t, "", "-p", "first one"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := run(t, "", "--preset", "flaky", "-p", "second, with a retry"); code != 0 {
		t.Fatal(errOut)
	}
	files := sessionFiles(t, home)
	if len(files) != 2 {
		t.Fatalf("%d session files", len(files))
	}
	// Order by name (time), never by luck: make the first one older too.
	old := time.Now().Add(-3 * time.Hour)
	os.Chtimes(files[0], old, old)

	out, errOut, code := run(t, "", "sessions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "" +
		"#  WHEN      MESSAGES  RETRIES  MODEL                FIRST PROMPT\n" +
		"1  just now  2         1        fake-llm/fake-model  second, with a retry\n" +
		"2  3h ago    2         0        sim/sim              first one\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}

	// --resume N and --resume (asking) open the UI on that file.
	var opened []string
	ui := func(_ *cobra.Command, _ streams, f *runFlags, first string) error {
		opened = append(opened, filepath.Base(f.file)+"|"+first)
		return nil
	}
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
		code  int
	}{
		{[]string{"--resume", "2"}, "", filepath.Base(files[0]) + "|", 0},
		{[]string{"--resume=1"}, "", filepath.Base(files[1]) + "|", 0},
		{[]string{"--resume"}, "2\n", filepath.Base(files[0]) + "|", 0},
		{[]string{"--resume", "3"}, "", "", 2},
		{[]string{"--resume"}, "", "", 2},
		{[]string{"2"}, "", "", 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			opened = nil
			var o, e strings.Builder
			code := execute(streams{in: strings.NewReader(tc.stdin), out: &o, err: &e, ui: ui}, append([]string{"sessions"}, tc.args...))
			if code != tc.code || strings.Join(opened, ",") != tc.want {
				t.Errorf("exit %d (want %d), opened %v (want %q), stderr %q", code, tc.code, opened, tc.want, e.String())
			}
		})
	}

	// The UI's /resume lists the same sessions.
	list, err := listSessions(filepath.Dir(files[0]), maxSessionList)
	if err != nil || len(list) != 2 || list[0].Path != files[1] || list[0].Retries != 1 || list[1].FirstPrompt != "first one" {
		t.Errorf("listSessions: %v %+v", err, list)
	}
}
