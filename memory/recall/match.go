package recall

import (
	"slices"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// pageMatch is termMatch for a set of pages, read from the postings of
// the query's terms, their prefix terms and their categories' members
// where the pages fall (lexical.Index.EachHolder), not from each page's
// words: on a LongMemEval history (long replies, ~300 distinct words a
// page) reading the candidates' words, even through a memo of each
// word's match, was a third of a retrieval's time.
type pageMatch struct {
	pages []int32   // ascending, distinct
	n     int       // query terms
	m     []float64 // m[k*n+j]: how much pages[k] holds query term j
}

// matchPages returns termMatch of each of pages (any order, repeats
// allowed) for qterms at the shares.
func matchPages(st *Pages, pages []int32, qterms []lexical.Term, prefixShare, memberShare float64) pageMatch {
	ps := slices.Clone(pages)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	pm := pageMatch{pages: ps, n: len(qterms), m: make([]float64, len(ps)*len(qterms))}
	if len(ps) == 0 || len(qterms) == 0 {
		return pm
	}
	for j, q := range qterms {
		raise := func(x float64) func(int) {
			return func(k int) {
				if i := k*pm.n + j; pm.m[i] < x {
					pm.m[i] = x
				}
			}
		}
		st.Index.EachHolder(q.Text, false, ps, raise(1))
		if prefixShare > 0 && letterPrefix(q.Text) {
			st.Index.EachHolder(q.Text, true, ps, raise(prefixShare))
		}
		if memberShare > 0 {
			for word := range memberSets()[q.Text] {
				st.Index.EachHolder(word, false, ps, raise(memberShare))
			}
		}
	}
	return pm
}

// of returns how much page p holds each query term: zeros for a page not
// among those matched. The slice is pm's own.
func (pm pageMatch) of(p int32) []float64 {
	k, ok := slices.BinarySearch(pm.pages, p)
	if !ok {
		return make([]float64, pm.n)
	}
	return pm.m[k*pm.n : (k+1)*pm.n : (k+1)*pm.n]
}
