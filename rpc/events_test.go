package rpc

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// TestEventOptionsOnTheWire: after set_event_options {partial:false} the
// server's message_update lines carry the delta and its index only; the
// default form carries the partial message.
func TestEventOptionsOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		name     string
		commands []string
		deltas   bool // Config.Deltas
		partial  bool // want the partial message on message_update
	}{
		{name: "default", partial: true},
		{name: "command", commands: []string{`{"id":"o","type":"set_event_options","partial":false}`}},
		{name: "config", deltas: true},
		{name: "config then back", deltas: true, commands: []string{`{"id":"o","type":"set_event_options","partial":true}`}, partial: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, cmds := io.Pipe()
			out, w := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Serve(context.Background(), in, w, Config{Session: simSession(t, -1), Deltas: tc.deltas})
				w.Close()
			}()
			lines := bufio.NewScanner(out)
			lines.Buffer(nil, 1<<20)
			for _, c := range append(tc.commands, `{"id":"p","type":"prompt","message":"What does rally do?"}`) {
				io.WriteString(cmds, c+"\n")
			}
			updates, text := 0, ""
			for lines.Scan() {
				l := lines.Text()
				if strings.Contains(l, `"success":false`) {
					t.Fatalf("refused: %s", l)
				}
				if strings.HasSuffix(l, `"type":"message_update"}`) {
					updates++
					if has := strings.Contains(l, `"partial"`) && strings.Contains(l, `"message":`); has != tc.partial {
						t.Fatalf("partial message on the line: %v, want %v: %s", has, tc.partial, l)
					}
				}
				if strings.HasSuffix(l, `"type":"message_end"}`) {
					text = l
				}
				if l == `{"type":"agent_settled"}` {
					break
				}
			}
			cmds.Close()
			go io.Copy(io.Discard, out)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if updates < 3 || !strings.Contains(text, "rally") {
				t.Fatalf("%d updates; message_end %s", updates, text)
			}
		})
	}
}

// TestClientRebuildsDeltas: a client reading the delta-only form hands
// its subscribers the same messages as one reading the default form.
func TestClientRebuildsDeltas(t *testing.T) {
	ctx := ctxT(t)
	texts := map[bool][]string{}
	for _, partial := range []bool{true, false} {
		c := serveInProcess(t, Config{Session: simSession(t, -1)})
		if err := c.SetEventOptions(ctx, partial); err != nil {
			t.Fatal(err)
		}
		rec := record(c)
		if err := c.Prompt(ctx, "What does rally do?", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitSettled(ctx); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		for _, e := range rec.events {
			e, ok := e.(session.MessageUpdateEvent)
			if !ok || e.Assistant.Type != llm.EventTextDelta {
				continue
			}
			if e.Message == nil || e.Assistant.Partial != e.Message {
				t.Fatalf("partial %v: an update without its message", partial)
			}
			texts[partial] = append(texts[partial], e.Message.TextOf())
		}
		rec.mu.Unlock()
	}
	got, want := texts[false], texts[true]
	if len(want) < 3 || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("rebuilt texts differ:\n got %q\nwant %q", got, want)
	}
}

// TestReadmeEventOptions runs the README's delta-only example against the
// sim model: its command lines in, its other lines expected in order.
func TestReadmeEventOptions(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "#### Event options: delta-only streaming")
	if !ok {
		t.Fatal("README has no section on event options")
	}
	blocks := mdfence.Texts(sec, "json")
	if len(blocks) == 0 {
		t.Fatal("the section on event options has no json block")
	}
	block := blocks[0]
	var commands, want []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		switch {
		case l == "…":
		case strings.Contains(l, `"type":"response"`) || strings.Contains(l, `,"type":"message_update"`) || strings.HasPrefix(l, `{"type":"agent_`):
			want = append(want, l)
		default:
			commands = append(commands, l)
		}
	}
	in, cmds := io.Pipe()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), in, w, Config{Session: simSession(t, -1)})
		w.Close()
	}()
	for _, c := range commands {
		io.WriteString(cmds, c+"\n")
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() && len(want) > 0 {
		if lines.Text() == want[0] {
			want = want[1:]
		}
		if lines.Text() == `{"type":"agent_settled"}` {
			break
		}
	}
	cmds.Close()
	go io.Copy(io.Discard, out)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(want) > 0 {
		t.Fatalf("README lines not written (in order): %q", want)
	}
}
