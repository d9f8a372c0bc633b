package retry

import (
	"fmt"
	"strings"
	"sync"
)

// The classifier looks for a few hundred phrases in every message. Asking
// strings.Contains for each one walked the text once per phrase and was most
// of the time Classify took; a dictionary of every phrase, compiled once into
// an Aho–Corasick automaton, finds them all in one pass over the text. The
// rules then ask, list by list and in list order, which phrase was seen, so
// the first phrase of a list still decides the reason as before.

// maxPhrases bounds the dictionary so that a found-set is a fixed array and
// scanning allocates nothing.
const maxPhrases = 8 * 64

// found is the set of dictionary phrases present in a text.
type found [maxPhrases / 64]uint64

func (f *found) add(id uint16)      { f[id/64] |= 1 << (id % 64) }
func (f *found) has(id uint16) bool { return f[id/64]&(1<<(id%64)) != 0 }

// phrases is one rule's list of lowercased, whitespace-normalised fragments,
// in the order the rule prefers them.
type phrases struct {
	words []string
	ids   []uint16
}

// first returns the first of the list's phrases present in f, or "".
func (p *phrases) first(f *found) string {
	for i, id := range p.ids {
		if f.has(id) {
			return p.words[i]
		}
	}
	return ""
}

// dictionary collects every rule's phrases and matches them all at once.
// It is filled by package-level variable initialisers, compiled on the
// first scan, and read-only afterwards. Compiling costs about 0.8 ms and
// 840 KB, which every process start (rally --version included) paid when
// init did it, though most never classify a failure.
type dictionary struct {
	words []string
	index map[string]uint16

	once sync.Once

	class  [256]uint8 // byte → input class; 0 is "no phrase has this byte"
	nclass int
	next   []uint16   // state*nclass+class → state
	out    [][]uint16 // state → phrases that end here
}

// The dictionary is filled at init, so its map is sized for the phrases
// the rules hold (about 250) rather than grown.
var dict = &dictionary{index: make(map[string]uint16, 320), words: make([]string, 0, 320)}

// list registers words and returns them as a rule's list.
func (d *dictionary) list(words ...string) *phrases {
	p := &phrases{words: words, ids: make([]uint16, len(words))}
	for i, w := range words {
		if w == "" || !normalized(w) {
			panic(fmt.Sprintf("retry: phrase %q must be lowercase and whitespace-normalised", w))
		}
		id, ok := d.index[w]
		if !ok {
			if len(d.words) == maxPhrases {
				panic("retry: phrase dictionary full")
			}
			id = uint16(len(d.words))
			d.index[w] = id
			d.words = append(d.words, w)
		}
		p.ids[i] = id
	}
	return p
}

// compile builds the automaton: a trie of all words, failure links by
// breadth-first search, and a dense transition table over the bytes that
// occur in some word.
func (d *dictionary) compile() {
	for _, w := range d.words {
		for i := 0; i < len(w); i++ {
			if d.class[w[i]] == 0 {
				d.nclass++
				d.class[w[i]] = uint8(d.nclass)
			}
		}
	}
	d.nclass++ // class 0 included
	n := d.nclass
	// Trie, with 0 meaning "no edge" (the root is state 0 and is never a
	// child).
	trie := [][]uint16{make([]uint16, n)}
	d.out = [][]uint16{nil}
	for id, w := range d.words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := d.class[w[i]]
			if trie[s][c] == 0 {
				trie = append(trie, make([]uint16, n))
				d.out = append(d.out, nil)
				if len(trie) > 1<<16 {
					panic("retry: phrase automaton too large")
				}
				trie[s][c] = uint16(len(trie) - 1)
			}
			s = int(trie[s][c])
		}
		d.out[s] = append(d.out[s], uint16(id))
	}
	d.next = make([]uint16, len(trie)*n)
	fail := make([]uint16, len(trie))
	queue := make([]uint16, 0, len(trie))
	for c := 0; c < n; c++ {
		if t := trie[0][c]; t != 0 {
			d.next[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		d.out[s] = append(d.out[s], d.out[fail[s]]...)
		for c := 0; c < n; c++ {
			t := trie[s][c]
			if t == 0 {
				d.next[int(s)*n+c] = d.next[int(fail[s])*n+c]
				continue
			}
			fail[t] = d.next[int(fail[s])*n+c]
			d.next[int(s)*n+c] = t
			queue = append(queue, t)
		}
	}
}

// scan reports which dictionary phrases occur in t.
func (d *dictionary) scan(t string) found {
	d.once.Do(d.compile)
	var f found
	n := d.nclass
	s := 0
	for i := 0; i < len(t); i++ {
		s = int(d.next[s*n+int(d.class[t[i]])])
		for _, id := range d.out[s] {
			f.add(id)
		}
	}
	return f
}

// normalized reports whether normalize(w) == w, without building the
// copy: registering the phrases at init then allocates nothing per phrase.
func normalized(w string) bool {
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case 'A' <= c && c <= 'Z', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			return false
		case c == ' ' && i+1 < len(w) && w[i+1] == ' ':
			return false
		case c >= 0x80:
			return strings.ToLower(w) == w
		}
	}
	return true
}

// normalize lowercases s and folds every run of whitespace into one space,
// so that a message wrapped over lines by a terminal or a log reads the same
// as the original. Runs of bytes that need no change are copied whole: this
// is on every classification's path, over bodies of a few kilobytes.
func normalize(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		s = strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] > ' ' && (s[j] < 'A' || s[j] > 'Z') {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) {
			break
		}
		switch c := s[j]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			b.WriteByte(' ')
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			j++
		default: // another control byte: kept
			b.WriteByte(c)
			j++
		}
		i = j
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
