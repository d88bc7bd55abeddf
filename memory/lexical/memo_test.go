package lexical

import (
	"slices"
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
