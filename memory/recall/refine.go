package recall

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// The last ranking steps, measured on the LoCoMo development split through
// the binary (docs/retrieval.md); round figures, not fitted to
// questions.
const (
	// windowBoost multiplies the score of a page whose time falls in a
	// window the query names ("in May 2023", "last week", "昨天"): R@10
	// +0.015, temporal +0.019 at 5 (boosts of 0.25–2 gained less). Raised
	// to 8 by the joint re-fit (eval/README.md, fourth session): with
	// speakerWeight 0.5 it wins back LoCoMo's R@10 (+0.003) and R@5
	// (+0.003), REALTALK R@5 +0.001; 3 lost LoCoMo R@10 0.004, 11 gave
	// the same as 8.
	windowBoost = 8
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
	// coverPool is how many of the best candidates coverage re-ranks
	// (at least four times the pages asked for).
	coverPool = 40
	// speakerPool is how many of the best candidates the named speaker
	// re-weighs (see speakerWeight).
	speakerPool = 20
	// focusTop and focusWeight reorder the first focusTop pages, last:
	// each score is multiplied by 1 + focusWeight × the page's own
	// coverage of the query (IDF-weighted, a prefix match counting half,
	// its neighbours left out), so that within the first ten the page
	// that holds the question's words comes before the neighbour that
	// borrowed its score. Recall@10 and @20 cannot change. Measured on
	// LoCoMo dev and REALTALK: nDCG@5 +0.003 and +0.006, R@5 +0.000 and
	// +0.003; at 0.25 and 1 less, by the own BM25 score LoCoMo lost.
	focusTop    = 10
	focusWeight = 0.5
	// listMemberShare is how much a member of a category the query names
	// (categories: "tennis" for "sports") counts as the category term
	// itself in the named speaker's words (weighSpeaker) and in focus, for
	// a question asking for several items (asksForList): the items of a
	// list are the category's members, and the page where the person
	// names one seldom holds the category word. Measured on LoCoMo dev and
	// REALTALK (eval/README.md, third session): LoCoMo within ±0.001 on
	// every metric, REALTALK R@10 +0.001, R@20 +0.004, multi-hop +0.002;
	// also in coverage or for every question it cost LoCoMo multi-hop.
	listMemberShare = 0.5
)

// Refine applies the query's time windows, term coverage, named speaker
// (weighSpeaker), for a question asking for several items the spread over
// sittings (spreadSittings), and last the order of the first pages by
// their own coverage (focus) to hits (the ranked candidates, best first)
// and returns the k best.
func Refine(st *Pages, query string, kterms []lexical.Term, now time.Time, hits []lexical.Hit, k int) []lexical.Hit {
	if len(hits) == 0 {
		return hits
	}
	if ws := queryWindows(query, now); len(ws) > 0 {
		changed := false
		for i := range hits {
			if inWindows(ws, st.Turns[hits[i].ID].Time) {
				hits[i].Score *= windowBoost
				changed = true
			}
		}
		if changed {
			SortHits(hits)
		}
	}
	// Coverage only lowers scores, so a page far down the list seldom
	// comes up; weighing the first coverPool pages keeps the cost of
	// reading their terms bounded.
	hits = hits[:min(len(hits), max(coverPool, 4*k))]
	qterms := QueryTerms(query)
	list := asksForList(query)
	member := 0.0
	if list {
		member = listMemberShare
	}
	if coverQuery(st, qterms, kterms, hits, list) {
		SortHits(hits)
	}
	// The named speaker's words are read from the text, which costs more
	// than the index's terms: only the first speakerPool pages (at least
	// twice those asked for) are weighed, and kept.
	hits = hits[:min(len(hits), max(speakerPool, 2*k))]
	if weighSpeaker(st, qterms, kterms, hits, member) {
		SortHits(hits)
	}
	// An exchange a host stores is weighed by the side the query asks
	// about (weighSide), as a dialogue's page by its named speaker.
	bound := 0.0
	if !list {
		// A page scoring less than the least weight's share of the
		// score of the last page kept (k, or focusTop for focus) stays
		// below it whatever its side holds: its side is not read.
		if n := max(k, focusTop); n <= len(hits) {
			bound = (1 - speakerWeight) * hits[n-1].Score
		}
	}
	if weighSide(st, query, qterms, kterms, hits, bound) {
		SortHits(hits)
	}
	// A question that asks for several items gets them from several
	// sittings (spreadSittings); the best page keeps its place.
	if list {
		spreadSittings(st, hits)
	}
	// The first focusTop pages whatever k is, so that the order of the
	// pages does not depend on how many are asked for.
	focus(st, qterms, kterms, hits[:min(focusTop, len(hits))], member)
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
// term is left alone: every hit holds it or its prefix. For a question
// asking for several items (list), a page whose own words name a member of
// a category term holds that term, the words being the asked-about
// speaker's when the query names one (see listCoverMembers).
func coverQuery(st *Pages, qterms, kterms []lexical.Term, hits []lexical.Hit, list bool) bool {
	if len(qterms) < 2 && len(kterms) == 0 {
		return false
	}
	// A query of one term is covered by every hit (it holds the term or
	// its prefix): only the keywords' coverage can tell them apart.
	var cov []float64
	if len(qterms) >= 2 {
		idf, _ := termIDF(st, qterms)
		var said *memberWords
		if list {
			named, _ := namedSpeaker(st, qterms, hits)
			said = &memberWords{speaker: named}
		}
		cov = coverage(st, qterms, idf, 0.5, said, hits)
	}
	if len(kterms) > 0 {
		// The host's words are a second rendering of the question: a
		// page holds the question as far as it holds either.
		kidf, _ := termIDF(st, kterms)
		if kcov := coverage(st, kterms, kidf, 0.5, nil, hits); kcov != nil {
			if cov == nil {
				cov = kcov
			}
			for i := range cov {
				cov[i] = max(cov[i], kcov[i])
			}
		}
	}
	if cov == nil {
		return false
	}
	for i := range hits {
		hits[i].Score *= math.Pow(cov[i], coverageExponent)
	}
	return true
}

// listCoverMembers: for a question asking for several items (asksForList),
// coverage counts a page's own words naming a member of a category the
// query names ("Spain" for "countries", "kickboxing" for "exercises") as
// the category word itself, when the asked-about speaker says them (any
// speaker when the query names none). Without it a page naming one item
// of the list held only the person's name of the question, and coverage
// sent it below the speaker step's pool. Only the page's own words count,
// and only the named speaker's: members in the neighbours' words, or in
// either speaker's (third session: a concert page of the other speaker's
// outranked the asked-about speaker's bands), cost LoCoMo multi-hop recall.
// With listCategoryWeight, measured on LoCoMo dev and REALTALK
// (eval/README.md, fourth session): multi-hop R@10 +0.012 and +0.006, R@10
// +0.003 on both, session all@10 +0.001 and +0.004.
type memberWords struct {
	speaker string // analysed name of the asked-about speaker, "" for any
	// cats are the query terms that name a category, with their members,
	// found on the first read (catsRead): held is called with one query's
	// terms, and a page's words are looked up in these sets only.
	cats     []categoryTerm
	catsRead bool
	// memo holds, per word of the index, the cats (bit i: cats[i]) it
	// is a member of: a page's words are looked up in the member sets
	// once per distinct word of a retrieval, not once per page.
	memo *lexical.TermMemo[uint64]
}

// categoryTerm is query term j, a category, and its members' set.
type categoryTerm struct {
	j       int
	members map[string]bool
}

// each calls fn with the index j of each query term that a word of page p
// is a member of, once per such word.
func (w *memberWords) each(st *Pages, p int, qterms []lexical.Term, fn func(j int)) {
	if !w.catsRead {
		w.catsRead = true
		for j, q := range qterms {
			if members := memberSets()[q.Text]; members != nil {
				w.cats = append(w.cats, categoryTerm{j, members})
			}
		}
	}
	switch {
	case len(w.cats) == 0:
		return
	case len(w.cats) > 64:
		st.Index.DocWords(p, func(term string) {
			for _, c := range w.cats {
				if c.members[term] {
					fn(c.j)
				}
			}
		})
		return
	}
	if w.memo == nil {
		w.memo = lexical.NewTermMemo(func(term string) uint64 {
			var in uint64
			for i, c := range w.cats {
				if c.members[term] {
					in |= 1 << i
				}
			}
			return in
		})
	}
	lexical.EachDocValue(st.Index, w.memo, p, func(in uint64) {
		for ; in != 0; in &= in - 1 {
			fn(w.cats[bits.TrailingZeros64(in)].j)
		}
	})
}

// held raises m (per query term, how much page p holds it) to 1 for each
// category term a member of which p's words say (see memberWords), and
// returns it (a copy when changed).
func (w *memberWords) held(st *Pages, p int, qterms []lexical.Term, m []float64) []float64 {
	if w.speaker == "" {
		// Both sides are read: their words are the index's words of
		// the page (Tokenize of its text), and reading the text again
		// would find the same members.
		var out []float64
		w.each(st, p, qterms, func(j int) {
			if m[j] < 1 && (out == nil || out[j] < 1) {
				if out == nil {
					out = slices.Clone(m)
				}
				out[j] = 1
			}
		})
		if out == nil {
			return m
		}
		return out
	}
	// Reading the text costs more than the index's words: only a page
	// whose words hold a member of a term it lacks is read.
	some := false
	w.each(st, p, qterms, func(j int) {
		some = some || m[j] < 1
	})
	if !some {
		return m
	}
	var out []float64 // m's copy, once a term is raised
	t := st.Turns[p]
	for _, side := range [2]string{t.User, t.Reply} {
		if w.speaker != "" && SpeakerOf(side) != w.speaker {
			continue
		}
		// Only the category terms (w.cats, read by each above) have
		// members.
		lexical.AnyTerm(side, func(term []byte) bool {
			for _, c := range w.cats {
				if j := c.j; m[j] < 1 && (out == nil || out[j] < 1) && c.members[string(term)] {
					if out == nil {
						out = slices.Clone(m)
					}
					out[j] = 1
				}
			}
			return false
		})
	}
	if out == nil {
		return m
	}
	return out
}

// coverage returns, for each hit, the share of the query's weight (idf,
// per term) held by the page, its previous or its next page in the same
// sitting; a term matched only by a word of the same prefix counts
// prefixShare. When said is not nil, the page's own words naming a member
// of a category term hold that term (see memberWords). It returns nil when
// the query has no weight.
func coverage(st *Pages, qterms []lexical.Term, idf []float64, prefixShare float64, said *memberWords, hits []lexical.Hit) []float64 {
	total := 0.0
	for _, w := range idf {
		total += w
	}
	if total == 0 {
		return nil
	}
	st.updateLinks()
	pages := make([]int32, 0, 3*len(hits))
	for _, h := range hits {
		prev, next := st.links.spanLinks(int32(h.ID))
		pages = append(pages, int32(h.ID), prev, next)
	}
	pages = slices.DeleteFunc(pages, func(p int32) bool { return p < 0 })
	match := matchPages(st, pages, qterms, prefixShare, 0).of
	out := make([]float64, len(hits))
	for i, h := range hits {
		id := int32(h.ID)
		own := match(id)
		if said != nil {
			own = said.held(st, h.ID, qterms, own)
		}
		cov := 0.0
		prev, next := st.links.spanLinks(id)
		for j := range qterms {
			m := own[j]
			for _, nb := range [2]int32{prev, next} {
				if nb >= 0 && m < 1 {
					m = max(m, match(nb)[j])
				}
			}
			cov += idf[j] * m
		}
		out[i] = cov / total
	}
	return out
}

// focus orders top (the first pages, best first) by their scores times
// 1 + focusWeight × each page's own coverage of qterms (see focusTop; a
// member of a category term counting memberShare), then gives them back
// top's scores in the order they had: the order of the pages changes, the
// sequence of scores does not.
func focus(st *Pages, qterms, kterms []lexical.Term, top []lexical.Hit, memberShare float64) {
	if len(qterms) == 0 || len(top) < 2 {
		return
	}
	idf, total := termIDF(st, qterms)
	if total == 0 {
		return
	}
	kidf, ktotal := termIDF(st, kterms)
	ids := make([]int32, len(top))
	for i, h := range top {
		ids[i] = int32(h.ID)
	}
	match := matchPages(st, ids, qterms, 0.5, memberShare).of
	var kmatch func(int32) []float64
	if ktotal > 0 {
		kmatch = matchPages(st, ids, kterms, 0.5, 0).of
	}
	scores := make([]float64, len(top))
	for i := range top {
		scores[i] = top[i].Score
		m := match(int32(top[i].ID))
		own := 0.0
		for j, w := range idf {
			own += w * m[j]
		}
		own /= total
		if ktotal > 0 {
			km := kmatch(int32(top[i].ID))
			kown := 0.0
			for j, w := range kidf {
				kown += w * km[j]
			}
			own = max(own, kown/ktotal)
		}
		top[i].Score *= 1 + focusWeight*own
	}
	SortHits(top)
	// The pages change places, the scores do not: top keeps its scores
	// in their order, so the relevance floor (Relevant), which compares
	// pages with the best one, sees the scores it saw before.
	slices.SortFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) })
	for i := range top {
		top[i].Score = scores[i]
	}
}

// The relevance floor of the injection text: pages below it stay in the
// ranked list but are not injected. Chosen on the everyday-questions suite
// (tools/testdata/everyday.json: a gate of 0.2 of the best page's score
// let unrelated questions through) and checked on LoCoMo dev and REALTALK
// through the binary (docs/tools.md, the <memory> text).
const (
	// relevanceShare is the least share of the best page's score that a
	// page holding minCoverage needs for any page to be shown: the gate.
	relevanceShare = 0.3
	// pageShare is the least share of the best page's score each page
	// shown needs, once the gate is passed. Lower than the gate's since
	// a page after the first quotes only the sides likely to hold the
	// answer (quotedSides): with 12 pages, from 0.3 to 0.2, evidence in
	// the text on LoCoMo dev 0.776 to 0.799, 367 to 444 tokens mean
	// (REALTALK 0.600 to 0.619, 481 to 569). From 0.2 to 0.18 when the
	// named speaker's weight went from 0.3 to 0.5 and time windows from ×5
	// to ×8 (speakerWeight, windowBoost), which spread the scores further
	// below the best page: at 0.2 the text on LoCoMo dev fell to 0.798
	// evidence at 421 tokens; at 0.18 0.801 at 439 (REALTALK 0.627 at 550
	// to 0.631 at 568); 0.17 gave 0.803 at 448, 0.15 went past 450 tokens.
	pageShare = 0.18
	// minCoverage is the least share of the query (IDF-weighted, words
	// never stored counting as the rarest) that a page with its
	// neighbours must hold: a question about something never discussed
	// matches only its commonest words. At least one page must hold it
	// for any page to be shown. From 0.25 to 0.2: questions injecting
	// nothing on LoCoMo dev 14 to 9 (REALTALK 30 to 17), none of the
	// everyday suite's unanswerable questions injects.
	minCoverage = 0.2
	// minPageCoverage is the least share each page shown must hold, once
	// one page holds minCoverage: a page that answers one part of a
	// question well (a name, a place) often holds little of its other
	// words. On LoCoMo dev, from 0.25 to 0.15: evidence in the text 0.715
	// to 0.727, tokens 427 to 443 mean; 0 gained only 0.001 more.
	minPageCoverage = 0.15
)

// Relevant reports which hits (ranked, best first) clear the relevance
// floor: nothing when no page holding minCoverage of the query scores
// relevanceShare of the best; else the pages that score pageShare of it
// and hold minPageCoverage. For a question asking for several items
// (list, see AsksForList) a page's own words naming a member of a
// category term hold that term, as in the ranking's coverage
// (memberWords): the page where the person names one item of the list is
// shown. Measured with locomo_injection.py (eval/README.md, fourth
// session), with the list steps of the ranking: evidence injected LoCoMo
// dev 0.799 → 0.803, REALTALK 0.622 → 0.626 (tokens mean +1.0% and
// +2.7%); without it the ranking's list steps cost REALTALK 0.004.
func Relevant(st *Pages, qterms []lexical.Term, hits []lexical.Hit, list bool) []bool {
	out := make([]bool, len(hits))
	if len(hits) == 0 || hits[0].Score <= 0 {
		return out
	}
	idf := TermWeights(st, qterms)
	var said *memberWords
	if list {
		named, _ := namedSpeaker(st, qterms, hits)
		said = &memberWords{speaker: named}
	}
	cov := coverage(st, qterms, idf, 1, said, hits)
	best := hits[0].Score
	gate := cov == nil
	for i, h := range hits {
		if h.Score >= relevanceShare*best && (cov == nil || cov[i] >= minCoverage) {
			gate = true
		}
	}
	if !gate {
		return out
	}
	for i, h := range hits {
		out[i] = h.Score >= pageShare*best && (cov == nil || cov[i] >= minPageCoverage)
	}
	return out
}

// RelevantByKeywords reports which hits (ranked, best first) clear the
// relevance floor on the host's keywords (kterms), as Relevant does on the
// query, but weighing only the keywords the page index holds: a keyword is
// the host's guess at the user's words, and a guess no exchange holds
// (counted as the rarest word, as an unknown query word is) would raise
// the share every other keyword must reach. When no keyword is held,
// nothing clears it.
func RelevantByKeywords(st *Pages, kterms []lexical.Term, hits []lexical.Hit) []bool {
	held := make([]lexical.Term, 0, len(kterms))
	for _, t := range kterms {
		if st.Index.IDF(t.Text) > 0 {
			held = append(held, t)
		}
	}
	if len(held) == 0 {
		return make([]bool, len(hits))
	}
	return Relevant(st, held, hits, false)
}

// prefixTerm appends to dst the page index's prefix term of an analysed
// term (see samePrefix) and reports whether it has one.
func prefixTerm(dst []byte, term string) ([]byte, bool) {
	if !samePrefix(term, term) {
		return dst, false
	}
	return append(append(dst, '~'), term[:5]...), true
}

func isCJKTerm(term string) bool {
	for _, r := range term {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// termMatch says, per query term, whether page p holds it (1), only a word
// with the same prefix term (prefixShare; the index's prefix field weighs
// it 0.5) or a member of the category the term names (memberShare, see
// isMember), the better of the two, or neither (0).
func termMatch(st *Pages, p int, qterms []lexical.Term, prefixShare, memberShare float64) []float64 {
	return matchPages(st, []int32{int32(p)}, qterms, prefixShare, memberShare).of(int32(p))
}

// wordMatch is how much an analysed word of a page matches the query term
// q: 1 when it is q, else the better of prefixShare when they share the
// prefix term and memberShare when it names a member of the category q
// (isMember), else 0.
func wordMatch(word, q string, prefixShare, memberShare float64) float64 {
	if word == q {
		return 1
	}
	m := 0.0
	if samePrefix(word, q) {
		m = prefixShare
	}
	if memberShare > m && isMember(q, word) {
		m = memberShare
	}
	return m
}

// memberSets maps an analysed category term to the set of its members'
// (categoryTable); built on first use.
var memberSets = sync.OnceValue(func() map[string]map[string]bool {
	m := make(map[string]map[string]bool, len(categoryTable()))
	for c, members := range categoryTable() {
		set := make(map[string]bool, len(members))
		for _, t := range members {
			set[t] = true
		}
		m[c] = set
	}
	return m
})

// isMember reports whether the analysed word names a member of the
// category the analysed term cat names.
func isMember(cat, word string) bool {
	return memberSets()[cat][word]
}

// samePrefix reports whether two analysed terms share the index's prefix
// term: both have one (letterPrefix) and their first five letters agree.
func samePrefix(a, b string) bool {
	return len(a) >= 5 && len(b) >= 5 && a[:5] == b[:5] && letterPrefix(a) && letterPrefix(b)
}

// termIDF returns the IDF of each term and their sum.
func termIDF(st *Pages, terms []lexical.Term) ([]float64, float64) {
	idf := make([]float64, len(terms))
	total := 0.0
	for i, t := range terms {
		idf[i] = st.Index.IDF(t.Text)
		total += idf[i]
	}
	return idf, total
}
