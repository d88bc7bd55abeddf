package lexical

import (
	"slices"
	"strings"
	"testing"
)

func TestTermMemoReset(t *testing.T) {
	ix := New(Options{})
	ix.Add(0, "the train leaves at nine")
	ix.Add(1, "the ferry leaves at ten")
	var words []string
	ix.DocWords(1, func(term string) { words = append(words, term) })

	m := NewTermMemo(func(term string) string { return "a:" + term })
	EachDocValue(ix, m, 0, func(string) {})
	m.Reset(func(term string) string { return "b:" + term })
	var got []string
	EachDocValue(ix, m, 1, func(v string) { got = append(got, v) })
	var want []string
	for _, w := range words {
		want = append(want, "b:"+w)
	}
	if !slices.Equal(got, want) {
		t.Errorf("EachDocValue after Reset = %q, want %q", got, want)
	}
}

// TestDocHolds asks DocHolds about term lists of the documents' own
// words, words of other documents, words of none, prefix terms and
// repeats (each position is reported), and compares it with what
// DocWords says each document holds, also after documents are removed
// and their ids indexed again.
func TestDocHolds(t *testing.T) {
	ix := New(Options{})
	texts := []string{
		"the train leaves at nine from the central station",
		"the ferry leaves at ten, trains are late",
		"deployment of the goroutines went fine",
		"我喜欢东京的寿司",
		"",
	}
	for i, s := range texts {
		ix.Add(i, s)
	}
	var all []string // every document's words, the removed ones' too
	for i := range texts {
		ix.DocWords(i, func(term string) { all = append(all, term) })
	}
	ix.Remove(1)
	ix.Add(1, "a bicycle from the station instead")
	ix.Remove(3)
	ix.Remove(4)
	ix.DocWords(1, func(term string) { all = append(all, term) })
	prefix := ""
	for term := range ix.terms {
		if isPrefixTerm(term) {
			prefix = term
			break
		}
	}
	lists := [][]string{
		nil,
		{"nowhere"},
		all,
		{all[3], "nowhere", all[0], all[3], prefix},
		slices.Concat(all, all),
	}
	for id := range len(texts) + 1 {
		holds := map[string]bool{}
		ix.DocWords(id, func(term string) { holds[term] = true })
		for _, terms := range lists {
			got := map[int]int{}
			ix.DocHolds(id, terms, func(i int) { got[i]++ })
			for i, term := range terms {
				want := 0
				if holds[term] {
					want = 1
				}
				if got[i] != want {
					t.Errorf("DocHolds(%d, %q): position %d (%q) reported %d times, want %d", id, terms, i, term, got[i], want)
				}
			}
		}
	}
}

// TestEachHolder holds EachHolder to the documents' own words: for each
// word, and each word's prefix, the positions reported are those of the
// asked documents that are live and hold it (or a word of its prefix
// term), whether few documents are asked (a search per document) or
// many (one merge); a prefix term's own text, an unknown word and a word
// without a prefix term report nothing.
func TestEachHolder(t *testing.T) {
	ix := New(Options{})
	vocab := strings.Fields("train trains trainer station stations ferry leaves covid19 fiancé 东京 go goroutines the nine")
	const n = 300
	for i := range n {
		var words []string
		for j := range 1 + i%7 {
			words = append(words, vocab[(i*7+j*3)%len(vocab)])
		}
		ix.Add(i, strings.Join(words, " "))
	}
	for i := 0; i < n; i += 11 {
		ix.Remove(i)
	}
	ix.Add(22, "trainer on the ferry")
	asks := [][]int32{nil, {5}, {1, 2, 3, 22, 299}, {0, 11, 22, 33}}
	var many []int32
	for i := range n + 5 {
		many = append(many, int32(i))
	}
	asks = append(asks, many)
	terms := append(slices.Clone(vocab), "nowhere", "~train", "trai")
	for _, term := range terms {
		word := Tokenize(term)
		for _, prefix := range []bool{false, true} {
			for _, docs := range asks {
				var got []int
				ix.EachHolder(firstOr(word, term), prefix, docs, func(k int) { got = append(got, k) })
				var want []int
				for k, d := range docs {
					held := false
					ix.DocWords(int(d), func(w string) {
						if !prefix {
							held = held || w == firstOr(word, term)
							return
						}
						p, ok := appendPrefix(nil, firstOr(word, term))
						q, ok2 := appendPrefix(nil, w)
						held = held || ok && ok2 && string(p) == string(q)
					})
					if held {
						want = append(want, k)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("EachHolder(%q, %v) of %d documents = %v, want %v", term, prefix, len(docs), got, want)
				}
			}
		}
	}
}

func firstOr(toks []string, s string) string {
	if len(toks) > 0 {
		return toks[0]
	}
	return s
}
