package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// partFiles are session files whose reading depends on order across a
// cut: chains, branches, duplicate ids, compactions, pi's roles, bad and
// blank lines, a torn tail, lines longer than the read buffer, a version 1
// file and a header after blank lines.
func partFiles(t testing.TB) map[string]string {
	entries := strings.Join(entryLines(t), "\n")
	long := strings.Repeat("x", 70<<10)
	return map[string]string{
		"pi session":   jPiSession,
		"odd entries":  mHeader + "\n" + entries + "\n",
		"torn tail":    mHeader + "\n" + mUser("a1", "", "one") + "\n" + mUser("a2", "a1", "two") + "\n" + `{"type":"message","id":"a3","parentId":"a2","mess`,
		"parsing tail": mHeader + "\n" + mUser("a1", "", "one") + "\n" + mUser("a2", "a1", "two"),
		"duplicate ids and a branch": strings.Join([]string{mHeader,
			mUser("a1", "", "one"), mUser("a2", "a1", "two"), mUser("a3", "a2", "three"),
			mUser("a2", "a1", "again"), mUser("a4", "a2", "four"), mUser("a5", "a1", "branch"),
			mUser("a6", "a5", "on the branch")}, "\n") + "\n",
		// pi's form of id, in the table rather than the map: the chain
		// differs when the second 0000000a is not seen as a duplicate
		// (its parent would be the entry above, not the last 0000000a).
		"duplicate hex ids": strings.Join([]string{mHeader,
			mUser("0000000a", "", "one"), mUser("0000000b", "0000000a", "two"),
			mUser("0000000a", "0000000b", "again")}, "\n") + "\n",
		"compaction and a missing parent": strings.Join([]string{mHeader,
			mUser("a1", "", "one"), mUser("a2", "a1", "two"), "not json at all", "",
			`{"type":"compaction","id":"c1","parentId":"a2","timestamp":"2026-03-04T10:00:02.000Z","summary":"s","firstKeptEntryId":"a2","tokensBefore":9}`,
			mUser("a3", "gone", "three"), `{"type":"session_info","id":"n1","parentId":"a3","name":" the name "}`,
			mUser("a4", "n1", "four")}, "\n") + "\n",
		"long lines": mHeader + "\n" + mUser("a1", "", long) + "\n" + mUser("a2", "a1", "two") + "\n" + mUser("a3", "a2", long) + "\n",
		"version 1": strings.Join([]string{mHeaderV1,
			`{"type":"message","timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}`,
			`{"type":"message","timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"two","timestamp":1}}`,
			`{"type":"compaction","summary":"s","firstKeptEntryIndex":2}`,
			`{"type":"message","timestamp":"2026-03-04T10:00:01.000Z","message":{"role":"user","content":"three","timestamp":1}}`}, "\n") + "\n",
		"header after blank lines": "\n  \n" + mHeader + "\n\n" + mUser("a1", "", "one") + "\n\n" + mUser("a2", "a1", "two") + "\n",
		"header only":              mHeader + "\n",
	}
}

// checkParts fails when reading data in parts gives anything else than
// reading it in one pass: entries, messages, ids, warnings, the leaf, the
// torn flag and the id set. It reports whether any read was in parts.
func checkParts(t *testing.T, data []byte) (cut bool) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(most int) (*readResult, error) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return readJournalIn(f, p, most, 1)
	}
	want, wantErr := read(1)
	// 2 and 3 parts cut inside the file; a part per byte (up to 1,024)
	// cuts at every line of a short file.
	for _, most := range []int{2, 3, min(len(data), 1024)} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, cuts := lineCuts(f, most, 1)
		f.Close()
		cut = cut || len(cuts) > 0
		got, err := read(most)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%d parts: error %v, in one pass %v", most, err, wantErr)
		}
		if err != nil {
			continue
		}
		// The same set of ids, wherever a probe cluster put each.
		if g, w := idsOf(got.ids), idsOf(want.ids); !reflect.DeepEqual(g, w) {
			t.Fatalf("%d parts (cuts %v): ids %v, in one pass %v", most, cuts, g, w)
		}
		g, w := *got, *want
		g.ids, w.ids = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%d parts (cuts %v): read\n%+v\nin one pass\n%+v", most, cuts, got.loaded, want.loaded)
		}
	}
	return cut
}

// TestReadInParts: a file read in parts, cut anywhere, is what it is read
// in one pass (bugs made to see it fail: join not moving the messages'
// pointers, the ids left out of the set, a part's warnings dropped, the
// first part reading past its cut, a version 1 file read in parts; a
// part's ids not merged into the set).
func TestReadInParts(t *testing.T) {
	for name, data := range partFiles(t) {
		t.Run(name, func(t *testing.T) {
			if !checkParts(t, []byte(data)) && name != "header only" {
				t.Fatal("no read was in parts")
			}
		})
	}
}

// TestLineCuts: each cut is the start of a line, named by its number, in
// order, and a part is never under the least size; each piece's lines are
// counted apart (bugs made to see it fail: a cut's line number from its
// own piece's count instead of the sum of those before it; the last
// piece's count left out of the total).
func TestLineCuts(t *testing.T) {
	data := "ab\ncd\n\nefgh\nij"
	p := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		most  int
		least int64
		want  []cut
	}{
		{1, 1, nil},
		{2, 1, []cut{{12, 5}}}, // the line after the middle's
		{3, 1, []cut{{6, 3}, {12, 5}}},
		{99, 1, []cut{{3, 2}, {6, 3}, {7, 4}, {12, 5}}},
		{99, 5, []cut{{12, 5}}}, // 14 bytes: 2 parts
		{2, 8, nil},
	}
	for _, tt := range tests {
		lines, cuts := lineCuts(f, tt.most, tt.least)
		if lines != 5 || !reflect.DeepEqual(cuts, tt.want) {
			t.Errorf("lineCuts(%d, %d) = %d, %v; want 5, %v", tt.most, tt.least, lines, cuts, tt.want)
		}
		// A reader that tells its size is cut as a file is; one that
		// does not is counted whole, in one piece.
		if lines, got := lineCuts(strings.NewReader(data), tt.most, tt.least); lines != 5 || !reflect.DeepEqual(got, cuts) {
			t.Errorf("lineCuts(strings.Reader, %d, %d) = %d, %v; want 5, %v", tt.most, tt.least, lines, got, cuts)
		}
		if lines, got := lineCuts(onlyReadAt{f}, tt.most, tt.least); lines != 5 || got != nil {
			t.Errorf("lineCuts(no size, %d, %d) = %d, %v; want 5, no cuts", tt.most, tt.least, lines, got)
		}
		for _, c := range cuts {
			if data[c.off-1] != '\n' || strings.Count(data[:c.off], "\n")+1 != c.line {
				t.Errorf("cut %v is not the start of line %d", c, c.line)
			}
		}
	}
}

// TestAppendInPlace: a slice right after another in memory is joined to
// it by its length; any other is copied after it (bug made to see it
// fail: the length changed without the adjacency test, which joins a
// part across a gap). A copy onto itself would look the same from here:
// that it is skipped shows in the join's profile, not in a test.
func TestAppendInPlace(t *testing.T) {
	slab := []int{1, 2, 3, 4, 5, 0, 0}
	other := []int{4, 5}
	tests := []struct {
		name    string
		a, b    []int
		want    []int
		inPlace bool
	}{
		{"right after", slab[:3], slab[3:5], []int{1, 2, 3, 4, 5}, true},
		{"a gap between", slab[:2], slab[3:5], []int{1, 2, 4, 5}, false},
		{"elsewhere", slab[:3:3], other, []int{1, 2, 3, 4, 5}, false},
		{"nothing to add", slab[:3], nil, []int{1, 2, 3}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			copy(slab, []int{1, 2, 3, 4, 5, 0, 0}) // as it was, for each case
			got := appendInPlace(tt.a, tt.b)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if in := len(tt.b) > 0 && &got[len(tt.a)] == &tt.b[0]; in != tt.inPlace {
				t.Fatalf("joined in place: %v, want %v", in, tt.inPlace)
			}
		})
	}
}

// TestIDBatches: the ids the readers of a file's parts kept apart are,
// merged, the set that adding them one by one makes, and an id that came
// twice (in one batch or two, of pi's form or not) is reported (bugs made
// to see it fail: a batch merged unsorted; two batches appended, not
// merged; a duplicate across batches, or within one, not reported; the
// set's own ids not looked up before an add).
func TestIDBatches(t *testing.T) {
	tests := []struct {
		name    string
		ids     [][]string // one batch each
		wantDup bool
	}{
		{"apart", [][]string{{"00000001", "00000004", "x-1"}, {"00000003", "00000002", "x-2"}}, false},
		{"interleaved", [][]string{everyOther(hexIDs(0, 40), 0), everyOther(hexIDs(0, 40), 1), {"0000ffff"}}, false},
		{"the same hex id in two", [][]string{{"00000001", "00000002"}, {"00000002", "00000003"}}, true},
		{"the same other id in two", [][]string{{"x-1"}, {"x-1"}}, true},
		{"twice in one", [][]string{{"00000001", "00000001"}, {}}, true},
		{"twice in the last", [][]string{{"00000005"}, {"00000009", "00000007", "00000009"}}, true},
		{"none", [][]string{{}, {}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newIDSet(0)
			var bs []*idBatch
			for _, ids := range tt.ids {
				b := newIDBatch(len(ids))
				for _, id := range ids {
					b.add(id)
				}
				b.done()
				bs = append(bs, b)
			}
			if dup := s.merge(bs...); dup != tt.wantDup {
				t.Fatalf("merge reported a duplicate: %v, want %v", dup, tt.wantDup)
			}
			one := newIDSet(0)
			for _, ids := range tt.ids {
				for _, id := range ids {
					one.add(id)
				}
			}
			if g, w := idsOf(s), idsOf(one); !reflect.DeepEqual(g, w) {
				t.Fatalf("merged batches hold %v, one by one %v", g, w)
			}
			// Every id merged is in the set for newEntryID, and an add of
			// one is a duplicate.
			for _, ids := range tt.ids {
				for _, id := range ids {
					if !s.has(id) || !s.add(id) {
						t.Fatalf("%s merged, then has %v, add not a duplicate", id, s.has(id))
					}
				}
			}
		})
	}
}

// TestReadStaleCounts: a file whose parts hold more lines than the
// counts it is read by say (one rewritten between the count and the read)
// reads the entries it holds, in order, each once: a part's entries
// outgrow their region, append moves them to an array of their own, and
// the join takes them from there (bugs made to see it fail: the first
// part's region taken back whatever it holds; a part's region not capped
// at the next one's start, which its overflow then writes into). Line
// numbers past a stale cut come from it, so they are not compared.
func TestReadStaleCounts(t *testing.T) {
	lines := []string{mUser("a1", "", "one"), mUser("a2", "a1", "two"), mUser("a3", "a2", "three"),
		mUser("a4", "a3", "four"), mUser("a5", "a4", "five")}
	data := mHeader + "\n" + strings.Join(lines, "\n") + "\n"
	// at is where entry i's line starts (the header is line 1, entry i
	// line i+2).
	at := func(i int) int64 { return int64(len(mHeader) + 1 + len(strings.Join(lines[:i], "\n")) + 1) }
	tests := []struct {
		name  string
		lines int
		cuts  []cut
	}{
		// Line 5 starts the fourth entry, but the cut says line 3, as if
		// the first three entries were one line: the first part's region
		// has a slot for one entry.
		{"the first part outgrows its region", 5, []cut{{at(3), 3}}},
		// The second part's three entries have a region of one.
		{"a middle part outgrows its region", 6, []cut{{at(1), 3}, {at(4), 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readCounted(strings.NewReader(data), "s.jsonl", tt.lines, tt.cuts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := readJournalIn(strings.NewReader(data), "s.jsonl", 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := entryTexts(got.loaded), entryTexts(want.loaded); !reflect.DeepEqual(g, w) {
				t.Fatalf("read by stale counts\n%q\nin one pass\n%q", g, w)
			}
		})
	}
}

// entryTexts is each entry of ld as its id, parent and text, then the
// context's texts.
func entryTexts(ld *Loaded) []string {
	var out []string
	for _, e := range ld.Entries {
		text := ""
		if e.Message != nil {
			text = e.Message.TextOf()
		}
		out = append(out, e.ID+" < "+e.ParentID+": "+text)
	}
	for _, m := range ld.Messages {
		out = append(out, "context: "+m.TextOf())
	}
	return out
}

// idsOf is what a set holds, as its sorted hex ids (read or added) and
// its other ids.
func idsOf(s *idSet) []string {
	var ids []string
	for _, v := range s.loaded {
		ids = append(ids, fmt.Sprintf("%08x", v))
	}
	for _, w := range s.table {
		if w != 0 {
			ids = append(ids, fmt.Sprintf("%08x", w-1))
		}
	}
	slices.Sort(ids)
	for id := range s.other {
		ids = append(ids, "other "+id)
	}
	slices.Sort(ids[len(ids)-len(s.other):])
	return ids
}

// onlyReadAt hides all but ReadAt of a file: its size is unknown.
type onlyReadAt struct{ f *os.File }

func (o onlyReadAt) ReadAt(b []byte, off int64) (int, error) { return o.f.ReadAt(b, off) }

// FuzzReadInParts: any file reads in parts as in one pass.
func FuzzReadInParts(f *testing.F) {
	for _, data := range partFiles(f) {
		if len(data) < 4<<10 {
			f.Add([]byte(data))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParts(t, data) })
}

// everyOther is ids[from], ids[from+2], …
func everyOther(ids []string, from int) []string {
	var out []string
	for i := from; i < len(ids); i += 2 {
		out = append(out, ids[i])
	}
	return out
}

// hexIDs are the ids from..to-1 in pi's 8-hex-digit form.
func hexIDs(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("%08x", i))
	}
	return ids
}
