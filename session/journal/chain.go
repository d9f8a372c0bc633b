package journal

// chain returns the indexes of the entries from the root to the last entry
// along parentId, as pi rebuilds a context. When a parent is missing
// (usually because its line was corrupt and skipped) the walk goes on with
// the entry just above in the file, so one bad line does not cut off all
// the history before it.
//
// Nearly every entry's parent is the entry above it: when no two entries
// share an id, that parent is found without an index of ids, which is
// built (a map the size of the file's entries, a tenth of what a load
// allocates) only for the first parent elsewhere: a branch.
func (r *journalReader) chain() []int {
	es := r.ld.Entries
	var byID map[string]int
	parent := func(i int, p string) (int, bool) {
		if !r.dupIDs && i > 0 && es[i-1].ID == p {
			return i - 1, true
		}
		if byID == nil {
			// The last entry with an id wins, as when each overwrote the one before.
			byID = make(map[string]int, len(es))
			for i := range es {
				byID[es[i].ID] = i
			}
		}
		k, ok := byID[p]
		return k, ok
	}
	seen := make([]bool, len(es))
	path := make([]int, 0, len(es))
	for i := len(es) - 1; i >= 0 && !seen[i]; {
		seen[i] = true
		path = append(path, i)
		p := es[i].ParentID
		if p == "" {
			break
		}
		if k, ok := parent(i, p); ok {
			i = k
			continue
		}
		if !r.skipped {
			r.warn(es[i].Line, "parent entry %q not found; continuing with the entry above", p)
		}
		i--
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	return path
}
