package lexical

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mustIndex returns an index holding docs under ids 0, 1, 2, …
func mustIndex(tb testing.TB, docs ...string) *Index {
	tb.Helper()
	ix := New(Options{})
	for i, d := range docs {
		ix.Add(i, d)
	}
	checkInvariants(tb, ix)
	return ix
}

func ids(hits []Hit) []int {
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	filler := "lorem ipsum dolor sit amet consectetur adipiscing elit sed eiusmod"
	tests := []struct {
		name  string
		docs  []string
		query string
		want  []int
	}{
		{"exact term above unrelated", []string{"the cat sat on the mat", "dogs bark at night"}, "cat", []int{0}},
		{"stemmed forms match", []string{"she was running late", "a quiet evening"}, "runs", []int{0}},
		{"more query terms rank higher", []string{"coffee in the morning", "coffee and tea in the morning", "tea time"}, "coffee tea", []int{1, 2, 0}},
		{"rarer term weighs more", []string{
			"common alpha", "rare beta", "common gamma", "common delta", "common epsilon", "common zeta",
		}, "common rare", []int{1, 5, 4, 3, 2, 0}},
		{"shorter document ranks higher", []string{"coffee " + filler, "coffee lorem"}, "coffee", []int{1, 0}},
		{"higher tf ranks higher", []string{"tea coffee lorem ipsum", "coffee coffee lorem ipsum"}, "coffee", []int{1, 0}},
		{"ties: newer first", []string{"same words", "other", "same words", "same words"}, "words", []int{3, 2, 0}},
		{"cjk", []string{"我喜欢喝咖啡", "他喜欢喝茶", "coffee"}, "咖啡", []int{0}},
		{"mixed", []string{"我用Go写FastAPI", "I write Python"}, "fastapi 用go", []int{0}},
		{"stop-word query", []string{"the and of"}, "the of and", nil},
		{"unknown term", []string{"cat"}, "zebra", nil},
		{"empty query", []string{"cat"}, "", nil},
		{"empty index", nil, "cat", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := mustIndex(t, tt.docs...).Search(tt.query, 10, nil)
			if got := ids(hits); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("Search(%q) = %v, want ids %v", tt.query, hits, tt.want)
			}
			for _, h := range hits {
				if !(h.Score > 0) {
					t.Errorf("Search(%q) hit %v, want Score > 0", tt.query, h)
				}
			}
		})
	}
}

func TestSearchK(t *testing.T) {
	ix := mustIndex(t, "apple pie", "apple tart", "banana", "apple juice")
	for _, tt := range []struct {
		k    int
		want []int
	}{{-1, nil}, {0, nil}, {1, []int{3}}, {2, []int{3, 1}}, {3, []int{3, 1, 0}}, {100, []int{3, 1, 0}}} {
		if got := ids(ix.Search("apple", tt.k, nil)); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("Search(apple, %d) ids = %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestSearchKeep(t *testing.T) {
	docs := make([]string, 20)
	for i := range docs {
		docs[i] = fmt.Sprintf("note %d about gardening", i)
	}
	ix := mustIndex(t, docs...)
	calls := 0
	even := func(id int) bool { calls++; return id%2 == 0 }
	got := ids(ix.Search("gardening", 3, even))
	if want := []int{18, 16, 14}; !slices.Equal(got, want) {
		t.Errorf("Search with keep(even) ids = %v, want %v", got, want)
	}
	if calls > len(docs) {
		t.Errorf("keep called %d times for %d documents", calls, len(docs))
	}
	if got := ix.Search("gardening", 3, func(int) bool { return false }); got != nil {
		t.Errorf("Search with keep(false) = %v, want nil", got)
	}
	// keep may use the index: it runs unlocked.
	got = ids(ix.Search("gardening", 2, func(id int) bool { return len(ix.Search(fmt.Sprint(id), 1, nil)) > 0 && id < 5 }))
	if want := []int{4, 3}; !slices.Equal(got, want) {
		t.Errorf("Search with re-entrant keep ids = %v, want %v", got, want)
	}
}

func TestRemove(t *testing.T) {
	ix := mustIndex(t, "red apple", "green apple", "yellow banana")
	ix.Remove(1)
	ix.Remove(1)  // twice: no-op
	ix.Remove(7)  // never added
	ix.Remove(-1) // out of range
	checkInvariants(t, ix)
	if got := ix.Len(); got != 2 {
		t.Errorf("Len() = %d after Remove, want 2", got)
	}
	if got := ix.Search("green", 10, nil); got != nil {
		t.Errorf("Search(green) = %v after Remove(1), want nil", got)
	}
	if got := ids(ix.Search("apple", 10, nil)); !slices.Equal(got, []int{0}) {
		t.Errorf("Search(apple) ids = %v, want [0]", got)
	}
	ix.Remove(0)
	ix.Remove(2)
	checkInvariants(t, ix)
	if ix.Len() != 0 || len(ix.terms) != 0 || ix.npost != 0 {
		t.Errorf("after removing everything: Len %d, %d terms, %d postings; want all 0", ix.Len(), len(ix.terms), ix.npost)
	}
	if got := ix.Search("apple", 10, nil); got != nil {
		t.Errorf("Search on emptied index = %v, want nil", got)
	}
}

func TestAddReplaces(t *testing.T) {
	ix := mustIndex(t, "old text about cats", "dogs")
	ix.Add(0, "new text about birds")
	checkInvariants(t, ix)
	if got := ix.Len(); got != 2 {
		t.Errorf("Len() = %d after re-Add, want 2", got)
	}
	if got := ix.Search("cats", 10, nil); got != nil {
		t.Errorf("Search(cats) = %v after replacing doc 0, want nil", got)
	}
	if got := ids(ix.Search("birds", 10, nil)); !slices.Equal(got, []int{0}) {
		t.Errorf("Search(birds) ids = %v, want [0]", got)
	}
	ix.Remove(1)
	ix.Add(1, "dogs again") // re-Add of a removed id before compaction
	ix.Add(5, "")           // empty document: counted, never found
	checkInvariants(t, ix)
	if got := ix.Len(); got != 3 {
		t.Errorf("Len() = %d, want 3", got)
	}
	if got := ids(ix.Search("dog", 10, nil)); !slices.Equal(got, []int{1}) {
		t.Errorf("Search(dog) ids = %v, want [1]", got)
	}
}

// TestChurn checks that removed documents do not leave terms or postings
// behind: the index stays as small as its live content.
func TestChurn(t *testing.T) {
	ix := New(Options{})
	for i := range 5000 {
		ix.Add(i, fmt.Sprintf("unique%d shared words", i))
		ix.Remove(i - 10)
	}
	checkInvariants(t, ix)
	if ix.Len() != 10 {
		t.Errorf("Len() = %d, want 10", ix.Len())
	}
	// 10 live documents hold 13 terms and 40 postings (one term and its
	// postings are the prefix field's "~share"); compaction lets stale ones
	// reach a third of the live ones at most.
	if len(ix.lists) > 20 || ix.npost > 53 {
		t.Errorf("after churn: %d term slots, %d postings; want ≤ 20 and ≤ 53", len(ix.lists), ix.npost)
	}
	if got := ids(ix.Search("unique4995 unique100", 10, nil)); !slices.Equal(got, []int{4995}) {
		t.Errorf("Search ids = %v, want [4995]", got)
	}
}

func TestAddOutOfOrder(t *testing.T) {
	ix := New(Options{})
	for _, id := range []int{9, 3, 7, 0, 5} {
		ix.Add(id, "shared words")
	}
	checkInvariants(t, ix)
	if got, want := ids(ix.Search("shared", 10, nil)), []int{9, 7, 5, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("Search ids = %v, want %v", got, want)
	}
}

func TestAddPanicsOnBadID(t *testing.T) {
	for _, id := range []int{-1, math.MaxInt32, math.MaxInt} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Add(%d) did not panic", id)
				}
			}()
			New(Options{}).Add(id, "x")
		}()
	}
}

func TestOptions(t *testing.T) {
	docs := []string{"coffee lorem ipsum dolor", "coffee coffee"}
	score := func(o Options) float64 {
		ix := New(o)
		for i, d := range docs {
			ix.Add(i, d)
		}
		return ix.Search("coffee", 1, nil)[0].Score
	}
	if a, b := score(Options{}), score(Options{K1: 1.2, B: 0.75}); a != b {
		t.Errorf("zero Options score %v, want the defaults' %v", a, b)
	}
	if a, b := score(Options{K1: 2, B: 1}), score(Options{}); a == b {
		t.Errorf("Options{K1: 2, B: 1} scored like the defaults (%v)", a)
	}
	if a, b := score(Options{B: 5}), score(Options{B: 1}); a != b {
		t.Errorf("B: 5 scored %v, want it clamped to 1 (%v)", a, b)
	}
}

func TestSimilarity(t *testing.T) {
	docs := []string{"the user lives in Lyon", "the user likes coffee", "coffee is brewed", "weather in Lyon"}
	ix := mustIndex(t, docs...)
	for i, d := range docs {
		for _, q := range []string{"where does the user live", "coffee", "lyon weather coffee"} {
			want := 0.0
			for _, h := range ix.Search(q, 10, nil) {
				if h.ID == i {
					want = h.Score
				}
			}
			if got := ix.Similarity(q, d); math.Abs(got-want) > 1e-9 {
				t.Errorf("Similarity(%q, %q) = %v, want Search's score %v", q, d, got, want)
			}
		}
	}
	for _, tt := range []struct{ q, text string }{{"coffee", ""}, {"", "coffee"}, {"tea", "coffee"}, {"the", "the"}} {
		if got := ix.Similarity(tt.q, tt.text); got != 0 {
			t.Errorf("Similarity(%q, %q) = %v, want 0", tt.q, tt.text, got)
		}
	}
	if got := New(Options{}).Similarity("coffee", "coffee beans"); !(got > 0) {
		t.Errorf("Similarity on an empty index = %v, want > 0", got)
	}
	if a, b := ix.Similarity("lyon coffee", "the user likes coffee"), ix.Similarity("lyon", "the user likes coffee"); !(a > b) {
		t.Errorf("Similarity with a matching extra term = %v, want above %v", a, b)
	}
}

func TestConcurrent(t *testing.T) {
	ix := New(Options{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 500 {
				id := w*500 + i
				ix.Add(id, fmt.Sprintf("message %d about topic%d and coffee", id, id%7))
				if i%3 == 0 {
					ix.Remove(id - 1)
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for i := range 300 {
				for _, h := range ix.Search(fmt.Sprintf("coffee topic%d", i%7), 5, func(id int) bool { return id%2 == 0 }) {
					if h.ID%2 != 0 || !(h.Score > 0) {
						t.Errorf("Search hit %v: want even id and Score > 0", h)
					}
				}
				ix.Similarity("coffee", "coffee break")
				ix.Len()
			}
		})
	}
	wg.Wait()
	checkInvariants(t, ix)
}

func TestSearchTerms(t *testing.T) {
	ix := mustIndex(t, "coffee in the morning", "tea at noon", "coffee and tea", "water")
	tests := []struct {
		name  string
		terms []Term
		want  []int
	}{
		{"weights order the matches", []Term{{"coffe", 1}, {"tea", 3}}, []int{2, 1, 0}},
		{"unknown and unweighted terms are ignored", []Term{{"juic", 5}, {"water", 0}, {"coffe", 1}}, []int{2, 0}},
		{"no terms, no hits", nil, []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(ix.SearchTerms(tc.terms, 10, nil)); !slices.Equal(got, tc.want) {
				t.Errorf("SearchTerms(%v) = %v, want %v", tc.terms, got, tc.want)
			}
		})
	}
	// A query of one term per token scores as Search does.
	a, b := ix.Search("coffee tea tea", 10, nil), ix.SearchTerms([]Term{{"coffe", 1}, {"tea", 2}}, 10, nil)
	if !slices.Equal(a, b) {
		t.Errorf("SearchTerms() = %v, want Search's %v", b, a)
	}
	if ix.IDF("coffe") >= ix.IDF("water") || ix.IDF("juic") != 0 {
		t.Errorf("IDF(coffe) = %v, IDF(water) = %v, IDF(juic) = %v; want common < rare, unknown 0",
			ix.IDF("coffe"), ix.IDF("water"), ix.IDF("juic"))
	}
}

func TestDocTerms(t *testing.T) {
	// The last document's counts pass a byte and a one-byte uvarint.
	docs := append(benchCorpus(50), "", "the of and", "数据库 数据库 C++ c++ café Cafe",
		strings.Repeat("coffee ", 127)+strings.Repeat("tea ", 128)+strings.Repeat("milk ", 600)+strings.Repeat("toast ", 70000))
	ix := mustIndex(t, docs...)
	ix.Remove(3)
	ix.Add(4, "replaced replaced text")
	docs[4] = "replaced replaced text"
	for id := range len(docs) + 2 {
		got := make(map[string]int)
		ix.DocTerms(id, func(term string, tf int) {
			if _, dup := got[term]; dup {
				t.Errorf("DocTerms(%d) gives %q twice", id, term)
			}
			got[term] = tf
		})
		want := make(map[string]int)
		if id < len(docs) && id != 3 {
			for _, tok := range Tokenize(docs[id]) {
				want[tok]++
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("DocTerms(%d) = %v, want %v", id, got, want)
		}
		words := make(map[string]int)
		ix.DocWords(id, func(term string) { words[term]++ })
		for term, n := range words {
			if _, ok := want[term]; !ok || n != 1 {
				t.Errorf("DocWords(%d) gives %q %d times, want %d", id, term, n, min(want[term], 1))
			}
		}
		if len(words) != len(want) {
			t.Errorf("DocWords(%d) gives %d terms, want %d", id, len(words), len(want))
		}
	}
}
