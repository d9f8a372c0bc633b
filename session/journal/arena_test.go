package journal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// TestLoadedMessagesAreTheirOwn: the messages of a load share blocks of
// memory (arena.go), and a caller that appends to one message's content,
// or to a tool call's arguments, must not write into the next message's.
// Each loaded message must also be the one its entry points to.
func TestLoadedMessagesAreTheirOwn(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	for i := range n {
		m := jAssistant(fmt.Sprintf("answer %d with \"quotes\"\n", i), int64(1700000000000+i))
		m.Content = append(m.Content, llm.Content{Type: llm.ToolCallType, ID: fmt.Sprint("call_", i), Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		if _, err := j.AppendMessage(m, false); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	ld, err := Load(j.Path())
	if err != nil || len(ld.Messages) != n {
		t.Fatalf("load: %v, %d messages", err, len(ld.Messages))
	}
	var ids []string
	for _, e := range ld.Entries {
		ids = append(ids, strings.Clone(e.ID), strings.Clone(e.ParentID))
	}
	for i := range ld.Messages {
		m := &ld.Messages[i]
		m.Content = append(m.Content, llm.Text("appended"))
		args := &m.Content[1].Arguments
		*args = append(*args, "garbage"...)
	}
	for i, m := range ld.Messages {
		want := fmt.Sprintf("answer %d with \"quotes\"\n", i)
		if len(m.Content) != 3 || m.Content[0].Text != want || string(m.Content[1].Arguments) != fmt.Sprintf(`{"n":%d}garbage`, i) || m.Content[2].Text != "appended" {
			t.Errorf("message %d after appending to each: %+v", i, m.Content)
		}
	}
	for i, e := range ld.Entries {
		if e.ID != ids[2*i] || e.ParentID != ids[2*i+1] {
			t.Errorf("entry %d after appending to each message: id %q, parent %q; want %q, %q", i, e.ID, e.ParentID, ids[2*i], ids[2*i+1])
		}
	}
	k := 0
	for i := range ld.Entries {
		if e := &ld.Entries[i]; e.Message != nil {
			if e.Message != &ld.Messages[k] {
				t.Errorf("entry %d does not point at message %d of the context", i, k)
			}
			k++
		}
	}
}
