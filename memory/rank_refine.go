package memory

import (
	"math"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// The last ranking steps, measured on the LoCoMo development split through
// the binary (README, retrieval section); round figures, not fitted to
// questions.
const (
	// windowBoost multiplies the score of a page whose time falls in a
	// window the query names ("in May 2023", "last week", "昨天"): R@10
	// +0.015, temporal +0.019 (boosts of 0.25–2 gained less).
	windowBoost = 5
	// windowSlack extends a window past its end: an event is often told a
	// few days after it happened.
	windowSlack = 24 * time.Hour
	// coverageExponent weighs how much of the query a page and its sitting
	// neighbours hold together: a page's score is multiplied by
	// coverage^coverageExponent, coverage being the IDF-weighted share of
	// query terms found in the page, its previous or its next page (a
	// prefix match counts half). R@10 +0.007; on the page alone, without
	// its neighbours, it lost 0.02.
	coverageExponent = 0.5
)

// refine applies the query's time windows and term coverage to hits (the
// ranked candidates, best first) and returns the k best. The caller holds
// st.mu for writing.
func (s *Service) refine(st *scopeState, query string, hits []lexical.Hit, k int) []lexical.Hit {
	if len(hits) == 0 {
		return hits
	}
	changed := false
	if ws := queryWindows(query, s.now()); len(ws) > 0 {
		for i := range hits {
			if inWindows(ws, st.turns[hits[i].ID].Time) {
				hits[i].Score *= windowBoost
				changed = true
			}
		}
	}
	if coverQuery(st, queryTerms(query), hits) {
		changed = true
	}
	if changed {
		sortHits(hits)
	}
	return hits[:min(k, len(hits))]
}

func inWindows(ws []timeWindow, t time.Time) bool {
	for _, w := range ws {
		if w.contains(t, windowSlack) {
			return true
		}
	}
	return false
}

// coverQuery multiplies each hit's score by its coverage of the query (see
// coverageExponent) and reports whether it changed any. A query of one
// term is left alone: every hit holds it or its prefix.
func coverQuery(st *scopeState, qterms []lexical.Term, hits []lexical.Hit) bool {
	if len(qterms) < 2 {
		return false
	}
	idf := make([]float64, len(qterms))
	total := 0.0
	for i, t := range qterms {
		idf[i] = st.pages.IDF(t.Text)
		total += idf[i]
	}
	if total == 0 {
		return false
	}
	st.updateLinks()
	cache := make(map[int32][]float64, len(hits)*2)
	match := func(p int32) []float64 {
		if m, ok := cache[p]; ok {
			return m
		}
		m := termMatch(st, int(p), qterms)
		cache[p] = m
		return m
	}
	for i, h := range hits {
		id := int32(h.ID)
		own := match(id)
		cov := 0.0
		for j := range qterms {
			m := own[j]
			for _, nb := range [2]int32{st.links.prev[id], st.links.next[id]} {
				if nb >= 0 && m < 1 {
					m = max(m, match(nb)[j])
				}
			}
			cov += idf[j] * m
		}
		hits[i].Score *= math.Pow(cov/total, coverageExponent)
	}
	return true
}

// termMatch says, per query term, whether page p holds it (1), only a word
// with the same prefix term (0.5, as the index's prefix field weighs it),
// or neither (0).
func termMatch(st *scopeState, p int, qterms []lexical.Term) []float64 {
	out := make([]float64, len(qterms))
	st.pages.DocTerms(p, func(term string, _ int) {
		for j, q := range qterms {
			switch {
			case term == q.Text:
				out[j] = 1
			case out[j] == 0 && samePrefix(term, q.Text):
				out[j] = 0.5
			}
		}
	})
	return out
}

// samePrefix reports whether two analysed terms share the index's prefix
// term: both at least five ASCII letters with the same first five.
func samePrefix(a, b string) bool {
	const n = 5
	if len(a) < n || len(b) < n || a[:n] != b[:n] {
		return false
	}
	for i := range n {
		if a[i] < 'a' || a[i] > 'z' {
			return false
		}
	}
	return true
}
