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

// TestSlotsWrittenFirst holds that a message and a usage are written as
// they are handed out of their slab (firstWrite): a slab's spare room
// holding something else must come out zero, which it does only if the
// slot is written before anything reads it.
func TestSlotsWrittenFirst(t *testing.T) {
	t.Run("message", func(t *testing.T) {
		slab := make([]llm.Message, 2)
		slab[0].Model, slab[1].Usage = "left", &llm.Usage{Input: 1}
		s := &scanner{msgs: slab[:0]}
		for i := range 2 {
			if m := s.newMessage(); m != &slab[i] || m.Model != "" || m.Usage != nil {
				t.Fatalf("message %d: %+v from the slab, want a zero one in it", i, m)
			}
		}
	})
	t.Run("usage", func(t *testing.T) {
		slab := make([]llm.Usage, 2)
		slab[0].Input, slab[1].Cost.Total = 7, 1.5
		u := usages{slab: slab[:0]}
		for i := range 2 {
			if p := u.next(); p != &slab[i] || *p != (llm.Usage{}) {
				t.Fatalf("usage %d: %+v from the slab, want a zero one in it", i, p)
			}
		}
		if p := u.next(); p == nil || *p != (llm.Usage{}) || len(u.slab) != 1 || cap(u.slab) != usageChunk {
			t.Fatalf("a full slab: %+v, slab %d/%d, want a zero usage of a new slab", p, len(u.slab), cap(u.slab))
		}
	})
}
