package lexical

import (
	"math"
	"testing"
)

// TestSearchTermsFeedback checks that the expanded search scored from the
// first search's scores ranks as SearchTerms of the expanded query does,
// with the same scores up to rounding: the first terms' weights scaled,
// extra terms (one of them a first term, one a prefix match, one a term
// no first hit holds) added; and that a change of the index while expand
// runs is seen.
func TestSearchTermsFeedback(t *testing.T) {
	docs := []string{
		"we booked a hotel in lisbon near the castle",
		"the castle tram runs every ten minutes",
		"dinner in lisbon was grilled sardines",
		"my sister lives in alfama, lisbon",
		"a quiet evening with a book",
		"trams and castles of portugal",
		"sardines again for lunch",
	}
	terms := []Term{{"lisbon", 1}, {"castl", 1.5}}
	extra := []Term{{"sardin", 0.4}, {"castl", 0.2}, {"tram", 0.3}, {"evening", 0.1}}
	const scale = 0.7
	want := func(ix *Index) []Hit {
		var q []Term
		for _, t := range terms {
			q = append(q, Term{t.Text, t.Weight * scale})
		}
		return ix.SearchTerms(append(q, extra...), 10, nil)
	}
	same := func(t *testing.T, got, want []Hit) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %d hits %v, want %d %v", len(got), got, len(want), want)
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9*want[i].Score {
				t.Fatalf("hit %d = %+v, want %+v (all: %v, want %v)", i, got[i], want[i], got, want)
			}
		}
	}

	t.Run("unchanged index", func(t *testing.T) {
		ix := mustIndex(t, docs...)
		var seen []Hit
		first, second := ix.SearchTermsFeedback(terms, 10, func(first []Hit) (float64, []Term) {
			seen = first
			return scale, extra
		})
		same(t, first, ix.SearchTerms(terms, 10, nil))
		same(t, seen, first)
		same(t, second, want(ix))
		// The scratch is clean for the next search.
		same(t, ix.SearchTerms(terms, 10, nil), first)
	})
	t.Run("index changed during expand", func(t *testing.T) {
		ix := mustIndex(t, docs...)
		_, second := ix.SearchTermsFeedback(terms, 10, func([]Hit) (float64, []Term) {
			ix.Add(len(docs), "a lisbon castle by night, and sardines")
			ix.Remove(4)
			return scale, extra
		})
		same(t, second, want(ix))
	})
	t.Run("nothing matches", func(t *testing.T) {
		ix := mustIndex(t, docs...)
		first, second := ix.SearchTermsFeedback([]Term{{"zebra", 1}}, 10, func(first []Hit) (float64, []Term) {
			if len(first) != 0 {
				t.Errorf("first = %v, want none", first)
			}
			return 1, nil
		})
		if len(first) != 0 || len(second) != 0 {
			t.Errorf("got %v, %v, want none", first, second)
		}
	})
}
