package journal

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestIDSet: the ids a journal must not reuse, in pi's hex form and any
// other, through the table's growth.
func TestIDSet(t *testing.T) {
	s := newIDSet(0)
	adds := []struct {
		id  string
		dup bool
	}{
		{"0000abcd", false},
		{"00000000", false}, // stored as 1: not the free slot
		{"ffffffff", false}, // cannot be stored plus one: kept as a string
		{"ffffffff", true},
		{"FFFFFFFF", false}, // another id than ffffffff
		{"0000abcd", true},
		{"v1-3", false},
		{"v1-3", true},
		{"709fb4a5-34df-4679-a0f4-d3d7b3c63a35", false},
	}
	for _, a := range adds {
		t.Run("add "+a.id, func(t *testing.T) {
			if got := s.add(a.id); got != a.dup {
				t.Errorf("add(%q) = %v, want %v", a.id, got, a.dup)
			}
			if !s.has(a.id) {
				t.Errorf("has(%q) = false after add", a.id)
			}
		})
	}
	for _, id := range []string{"0000abce", "fffffffe", "Ffffffff", "v1-4", "", "0000abc"} {
		t.Run("absent "+id, func(t *testing.T) {
			if s.has(id) {
				t.Errorf("has(%q) = true, never added", id)
			}
		})
	}
	t.Run("growth", func(t *testing.T) {
		g := newIDSet(0)
		for i := range 5000 {
			if g.add(fmt.Sprintf("%08x", i*7919)) {
				t.Fatalf("id %d reported as a duplicate", i)
			}
		}
		for i := range 5000 {
			if !g.has(fmt.Sprintf("%08x", i*7919)) {
				t.Fatalf("id %d lost as the table grew", i)
			}
			if g.has(fmt.Sprintf("%08x", i*7919+1)) { // not a multiple: never added
				t.Fatalf("id %08x found, never added", i*7919+1)
			}
		}
		if len(g.table) < 2*g.n {
			t.Errorf("table of %d slots for %d ids: more than half full", len(g.table), g.n)
		}
	})
}

// TestLoadDuplicateIDs: with two entries of one id, a parent names the
// later one (the last entry with an id wins), even where the earlier one
// is the entry just above, which the walk otherwise takes without a look-up.
func TestLoadDuplicateIDs(t *testing.T) {
	p := mFile(t, mHeader,
		mUser("aaaaaaaa", "", "x"),
		mUser("bbbbbbbb", "aaaaaaaa", "y"),
		mUser("aaaaaaaa", "", "z"),
		mUser("cccccccc", "bbbbbbbb", "w"),
	)
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ld.Messages {
		got = append(got, m.TextOf())
	}
	if want := "z y w"; strings.Join(got, " ") != want {
		t.Errorf("context %q, want %q", strings.Join(got, " "), want)
	}
}

// TestLoadParentIDs: a parent id is read as a view of its line; the id of
// the entry above is shared, any other is copied before the next line
// reuses the buffer.
func TestLoadParentIDs(t *testing.T) {
	p := mFile(t, mHeader,
		mUser("aaaaaaaa", "", "one"),
		mUser("bbbbbbbb", "aaaaaaaa", "two"),
		mUser("cccccccc", "aaaaaaaa", "three"), // a branch: not the entry above
		mUser("dddddddd", "cccccccc", "four"),
		mUser("eeeeeeee", "zzzzzzzz", "five"), // a parent that is nowhere
		mUser("ffffffff", "eeeeeeee", "six"),
	)
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "aaaaaaaa", "aaaaaaaa", "cccccccc", "zzzzzzzz", "eeeeeeee"}
	if len(ld.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(ld.Entries), len(want))
	}
	for i, e := range ld.Entries {
		if e.ParentID != want[i] {
			t.Errorf("entry %d: parent %q, want %q", i, e.ParentID, want[i])
		}
		if i > 0 && e.ParentID == ld.Entries[i-1].ID && unsafe.StringData(e.ParentID) != unsafe.StringData(ld.Entries[i-1].ID) {
			t.Errorf("entry %d: parent id a copy of the id above, not shared", i)
		}
	}
}
