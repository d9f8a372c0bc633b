package retry

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDictionaryScan checks the one-pass matcher against strings.Contains
// for every phrase, on every corpus text and on random texts built from
// phrase fragments (so that overlaps and near-misses are common).
func TestDictionaryScan(t *testing.T) {
	texts := []string{"", " ", "overloaded", "x overloadedoverloaded y", "余额不足", "rate-limit rate limit"}
	for _, e := range loadCorpus(t) {
		texts = append(texts, parse(e.failure()).text)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			w := dict.words[r.IntN(len(dict.words))]
			b.WriteString(w[r.IntN(len(w)):])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		f := dict.scan(text)
		for id, w := range dict.words {
			if got, want := f.has(uint16(id)), strings.Contains(text, w); got != want {
				t.Fatalf("scan(%q) has %q = %v, strings.Contains says %v", text, w, got, want)
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Prompt Is Too Long", "prompt is too long"},
		{"context size has been\nexceeded", "context size has been exceeded"},
		{"a \t\r\n  b", "a b"},
		{"  lead and trail \n", " lead and trail "},
		{"ÄRGER über  Limits", "ärger über limits"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
