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
