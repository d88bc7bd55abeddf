package recall

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Page ranking: BM25 over the page index, RM3 pseudo-relevance feedback,
// then evidence from neighbours in the same sitting and from the sitting
// as a whole. The values were chosen on the
// LoCoMo development split as round figures from a coarse sweep (see the
// docs/retrieval.md), not fitted to questions.
const (
	// rankPool is how many BM25 candidates are re-ranked.
	RankPool = 100
	// neighbourWeight is the share of an adjacent page's score (same
	// sitting) added to a page: answers often span consecutive exchanges,
	// and the turn that matches the query's words is not always the one
	// that holds the answer. 0.5 before the sitting prior (sittingShare)
	// took part of its work.
	neighbourWeight = 0.4
	// sittingShare is the share of the best page's score that a page gets
	// from its sitting's score (sittingPrior), the sitting's score being
	// the sum of its sittingBest best pages' scores, normalised to the
	// best sitting's. Measured on LoCoMo dev and REALTALK (README,
	// retrieval section) with neighbourWeight 0.4: R@5 +0.005 on both,
	// nDCG@5 +0.003 and +0.005, R@10 −0.001 and +0.002; 0.15 and more, or
	// all of a sitting's pages summed, lost session coverage.
	sittingShare = 0.1
	sittingBest  = 2
	// sittingGap is the longest pause between two turns of one thread
	// that keeps them in the same sitting.
	SittingGap = time.Hour
	// neighbourWeight and coverage's neighbours apply between the pages of
	// a dialogue between two named people only (spanLinks): a page cut
	// from such a chat ("Tim: …" / "John: …", as an import or a two-person
	// log stores it) is one slice of a conversation, and the answer often
	// runs into the next; a page a host stores is a whole exchange, the
	// user's message and the assistant's reply to it, and its neighbours
	// are other questions. On the LongMemEval development half (user and
	// assistant, no keywords), neighbour evidence and neighbours in
	// coverage put a neighbour before the answer: turn nDCG@5 0.559 with
	// them, 0.640 without (plain BM25 0.614), recall_any@5 0.848 and 0.894
	// (0.828); with the host's keywords 0.571 and 0.686 (BM25 with them
	// 0.706). LoCoMo and REALTALK, dialogues throughout, are unchanged.
	// feedbackDocs, feedbackTerms and feedbackShare tune RM3: the best
	// feedbackDocs pages lend their feedbackTerms most telling terms, which
	// make up feedbackShare of the expanded query's weight.
	feedbackDocs  = 5
	feedbackTerms = 10
	feedbackShare = 0.3
	// listFeedbackTerms replaces feedbackTerms for a question asking for
	// several items (asksForList): a list's items are spread over pages
	// that share fewer words with the question, and more of the best
	// pages' terms reach them. Measured on LoCoMo dev and REALTALK
	// (eval/README.md, third session): multi-hop R@10 +0.003 and +0.005,
	// session all@10 +0.004 on both, R@10 +0.000 and +0.002; 20 terms cost
	// LoCoMo R@5, and 15 or 20 for every question cost LoCoMo R@5 and
	// nDCG@5 (−0.004 to −0.009). The joint re-fit (eval/README.md, fourth
	// session) raised it to 25 on main as it was; with the list questions'
	// member steps merged beside it (listCategoryWeight, memberWords), 25
	// lost against 15: LoCoMo dev multi-hop R@10 0.5795 → 0.5789, R@20
	// −0.003, REALTALK multi-hop 0.476 → 0.474.
	listFeedbackTerms = 15
)

// pageLinks records, per page position, the page before and after it in
// the same sitting (same thread, at most sittingGap apart) and the
// sitting's first page. It is extended lazily as turns arrive.
type pageLinks struct {
	prev, next []int32          // -1 when none
	sitting    []int32          // position of the sitting's first page
	last       map[string]int32 // thread → last position seen
	// dialogue says the page is a slice of a dialogue between named
	// people (DialogueSlice).
	dialogue []bool
}

// spanLinks returns the pages before and after p in its sitting that an
// answer may run across: both it and they slices of a dialogue between
// named people (see neighbourWeight); -1 when none.
func (l *pageLinks) spanLinks(p int32) (prev, next int32) {
	prev, next = -1, -1
	if !l.dialogue[p] {
		return prev, next
	}
	if q := l.prev[p]; q >= 0 && l.dialogue[q] {
		prev = q
	}
	if q := l.next[p]; q >= 0 && l.dialogue[q] {
		next = q
	}
	return prev, next
}

// DialogueSlice reports whether a page with these sides is a slice of a
// dialogue between named people: every side it has begins with a
// speaker's name (SpeakerOf); a page of one side is one message of it.
// The page index scores such a page as one text (BM25) and an exchange a
// host stores by its two sides (BM25F, PageFields).
func DialogueSlice(user, reply string) bool {
	if user == "" && reply == "" {
		return false
	}
	return (user == "" || SpeakerOf(user) != "") && (reply == "" || SpeakerOf(reply) != "")
}

// Link extends the session links, which ranking reads, to every turn of
// st. Ranking extends them itself when turns were added since; a caller
// that ranks under a read lock, in parallel, calls Link first under its
// write lock, so that ranking only reads them.
func (st *Pages) Link() { st.updateLinks() }

// Linked reports whether the session links reach every turn of st.
func (st *Pages) Linked() bool {
	return st.links.last != nil && len(st.links.prev) == len(st.Turns)
}

// updateLinks extends the links to every turn of st.
func (st *Pages) updateLinks() {
	l := &st.links
	if l.last == nil {
		l.last = make(map[string]int32, len(st.Threads))
	}
	if n := len(st.Turns) - len(l.prev); n > 1 {
		l.prev, l.next = slices.Grow(l.prev, n), slices.Grow(l.next, n)
		l.sitting, l.dialogue = slices.Grow(l.sitting, n), slices.Grow(l.dialogue, n)
	}
	for p := len(l.prev); p < len(st.Turns); p++ {
		t := st.Turns[p]
		prev, ok := l.last[t.ThreadID]
		l.last[t.ThreadID] = int32(p)
		l.next = append(l.next, -1)
		l.dialogue = append(l.dialogue, DialogueSlice(t.User, t.Reply))
		if ok && t.Time.Sub(st.Turns[prev].Time).Abs() <= SittingGap {
			l.prev = append(l.prev, prev)
			l.next[prev] = int32(p)
			l.sitting = append(l.sitting, l.sitting[prev])
			continue
		}
		l.prev = append(l.prev, -1)
		l.sitting = append(l.sitting, int32(p))
	}
}

// sittingPrior adds to each of out's scores sittingShare of its sitting's
// score, a hierarchical prior: the sitting is scored as one document by
// the sum of its sittingBest best pages in hits (the search's, best
// first), normalised to the best sitting's, times hits' best score. A page
// with a good score of its own still comes first; among pages that score
// alike, those of a sitting about the question come forward.
func sittingPrior(st *Pages, hits, out []lexical.Hit) {
	if len(hits) == 0 || hits[0].Score <= 0 {
		return
	}
	type sitting struct {
		score float64
		pages int
	}
	sits := make(map[int32]sitting, len(hits))
	best := 0.0
	for _, h := range hits {
		id := st.links.sitting[h.ID]
		if s := sits[id]; s.pages < sittingBest {
			s.score += h.Score
			s.pages++
			sits[id] = s
			best = max(best, s.score)
		}
	}
	for i := range out {
		out[i].Score += sittingShare * sits[st.links.sitting[out[i].ID]].score / best * hits[0].Score
	}
}

// RankPages returns the k best pages for query, best first: the lexical
// ranking of the query's terms and the keywords' (see SearchTerms) with
// their other forms, synonyms and category members (withVariants; for a
// list question the members at listCategoryWeight), fused with the nearest
// pages to the query's vector qv when there is one, the vectors having the
// share vw (see fuse).
func RankPages(st *Pages, query string, keywords []string, qv []float32, vw float64, k int) []lexical.Hit {
	pool := max(RankPool, k)
	nfb, members := feedbackTerms, categoryWeight
	if asksForList(query) {
		nfb, members = listFeedbackTerms, listCategoryWeight
	}
	lex := lexicalPages(st, withVariantsAt(st, SearchTerms(query, keywords), members), pool, nfb)
	if qv == nil || st.Vec.Count == 0 {
		return lex[:min(k, len(lex))]
	}
	hits := Fuse(lex, nearestPages(st, qv, pool), vw)
	return hits[:min(k, len(hits))]
}

// lexicalPages ranks up to pool pages by the weighted terms qterms, with
// nfb feedback terms (see feedback).
func lexicalPages(st *Pages, qterms []lexical.Term, pool, nfb int) []lexical.Hit {
	first, hits := st.Index.SearchTermsFeedback(qterms, pool, func(first []lexical.Hit) (float64, []lexical.Term) {
		return feedback(st, qterms, first, nfb)
	})
	if len(first) == 0 {
		return nil
	}
	st.updateLinks()
	base := make(map[int32]float64, len(hits)*2)
	for _, h := range hits {
		base[int32(h.ID)] = h.Score
	}
	// The candidates are the hits and their neighbours, each once; their
	// order does not matter (the scores are sorted with a full order).
	cands := make([]int32, 0, 3*len(hits))
	for _, h := range hits {
		id := int32(h.ID)
		for _, c := range [3]int32{id, st.links.prev[id], st.links.next[id]} {
			if c >= 0 {
				cands = append(cands, c)
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	out := make([]lexical.Hit, 0, len(cands))
	for _, c := range cands {
		sc := base[c]
		if p, n := st.links.spanLinks(c); p >= 0 || n >= 0 {
			if p >= 0 {
				sc += neighbourWeight * base[p]
			}
			if n >= 0 {
				sc += neighbourWeight * base[n]
			}
		} else if sc == 0 {
			// An exchange a host stores borrows nothing from its
			// neighbours, but one that matches nothing comes along
			// after the exchange next to it ("Let me tell you about my
			// garden" brings "I planted tomatoes"), below every page
			// that matches.
			for _, nb := range [2]int32{st.links.prev[c], st.links.next[c]} {
				if nb >= 0 {
					sc = max(sc, neighbourWeight*base[nb])
				}
			}
		}
		out = append(out, lexical.Hit{ID: int(c), Score: sc})
	}
	sittingPrior(st, hits, out)
	SortHits(out)
	ownOrder(st, first, out)
	return out[:min(pool, len(out))]
}

// ownOrder keeps each sitting's places in hits (ranked, best first) but
// fills them with the sitting's exchanges a host stored in the order of
// their own score on the query's terms (first, the search before
// feedback): feedback says which sittings speak of what is asked, the
// query's words which exchange of a sitting answers it. The feedback
// terms of a user–assistant sitting are its topic's words, which its long
// replies repeat: "What book am I currently reading?" put a reply on a
// book club before "I'm currently devouring …". On the LongMemEval
// development half: turn nDCG@5 0.663 to 0.678, recall_any@5 0.899 to
// 0.904, single-session-user nDCG@5 0.877 to 0.917 (plain BM25 0.911),
// session recall_all@10 unchanged; with the host's keywords nDCG@5 0.729
// to 0.731, recall_any@10 0.975 to 0.980, recall_any@5 0.949 to 0.944 (one
// question). Slices of a dialogue between named people keep their places:
// LoCoMo dev and REALTALK are unchanged.
func ownOrder(st *Pages, first, hits []lexical.Hit) {
	own := make(map[int]float64, len(first))
	for _, h := range first {
		own[h.ID] = h.Score
	}
	places := make(map[int32][]int)
	for i, h := range hits {
		if st.links.dialogue[h.ID] {
			continue
		}
		s := st.links.sitting[h.ID]
		places[s] = append(places[s], i)
	}
	for _, at := range places {
		if len(at) < 2 {
			continue
		}
		// Each exchange's own score is looked up once, not in every
		// comparison of the sort.
		ids := make([]lexical.Hit, len(at))
		for j, i := range at {
			ids[j] = lexical.Hit{ID: hits[i].ID, Score: own[hits[i].ID]}
		}
		slices.SortStableFunc(ids, func(a, b lexical.Hit) int { return cmp.Compare(b.Score, a.Score) })
		for j, i := range at {
			hits[i].ID = ids[j].ID
		}
	}
}

// askingWords are words about the asking rather than the thing asked
// ("what did I mention recently about…", "what kind of…"): stemmed as
// Tokenize stems them, they are left out of a query that has other words.
// Measured on the LoCoMo development split: R@10 +0.006, multi-hop +0.017.
var askingWords = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool)
	for _, t := range lexical.Tokenize(`mention mentioned recently lately kind type sort many much remember
		remind recall know tell told say said talk talked discuss discussed share shared ever currently
		considered likely thing things anything something again please 时候 多少 如何 是否`) {
		m[t] = true
	}
	return m
})

// stateWords are askingWords that a question asking the user about
// themselves (AsksUser) keeps: "What book am I currently reading?" is
// answered where the user told the assistant "I'm currently devouring
// …", in the same word, while "What is Caroline currently doing?", asked
// about people in a dialogue, uses it as the asker's phrasing. Measured
// on the LongMemEval development half: turn recall_any@5 0.894 to 0.899
// and nDCG@5 0.661 to 0.663 (with the host's keywords 0.944 to 0.949 and
// 0.722 to 0.729), single-session-user recall_any@5 0.970 to 1.000, 12
// of 198 questions ranked otherwise, four of them worse; LoCoMo dev and
// REALTALK hold no such question and are unchanged. "recently" and
// "lately" too changed nothing more.
var stateWords = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool)
	for _, t := range lexical.Tokenize(`currently`) {
		m[t] = true
	}
	return m
})

// askingRunes are Chinese question characters (什么, 怎么, 哪里, 吗, 呢):
// a CJK bigram holding one is about the asking.
const askingRunes = "什么怎哪吗呢"

// QueryTerms analyses query into the terms searched for: Tokenize's, less
// the askingWords and bigrams with askingRunes unless nothing else is left; a repeated term counts
// once per occurrence.
func QueryTerms(query string) []lexical.Term {
	toks := lexical.Tokenize(query)
	out := make([]lexical.Term, 0, len(toks))
	user := AsksUser(query)
	for _, t := range toks {
		if user && stateWords()[t] || !askingWords()[t] && !strings.ContainsAny(t, askingRunes) {
			out = append(out, lexical.Term{Text: t, Weight: 1})
		}
	}
	if len(out) == 0 {
		for _, t := range toks {
			out = append(out, lexical.Term{Text: t, Weight: 1})
		}
	}
	return out
}

// keywordWeight is the weight of a keyword's term against a query term's
// 1. Keywords are the host's model's rendering of what is asked, in the
// words the user may have used (synonyms, names, the likely answer's
// terms): a second query, not a footnote to the first, so a term of
// theirs weighs as a term of the question, and coverage, the named
// speaker's words and focus count a page holding either rendering
// (Refine). Measured with keywords written as a host writes them
// (eval/keywords, issue 38): at 0.5 with coverage over the question's
// words only, LoCoMo dev R@10 0.849, multi-hop 0.620 (REALTALK 0.666,
// 0.487); at 1 with the host's words in every step, 0.859 and 0.650
// (0.676, 0.494); 0.75 gave less on both sets.
const keywordWeight = 1.0

// MaxKeywords bounds how many keyword terms a search adds.
const MaxKeywords = 32

// SearchTerms returns the query's terms (QueryTerms) followed by the
// keywords' terms (KeywordTerms) that the query does not hold, each of
// weight keywordWeight.
func SearchTerms(query string, keywords []string) []lexical.Term {
	terms := QueryTerms(query)
	if len(keywords) == 0 {
		return terms
	}
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		seen[t.Text] = true
	}
	for _, t := range KeywordTerms(keywords) {
		if !seen[t.Text] {
			terms = append(terms, lexical.Term{Text: t.Text, Weight: keywordWeight})
		}
	}
	return terms
}

// KeywordTerms analyses keywords into distinct terms of weight 1, less the
// askingWords, at most MaxKeywords of them.
func KeywordTerms(keywords []string) []lexical.Term {
	var terms []lexical.Term
	seen := make(map[string]bool)
	for _, kw := range keywords {
		for _, t := range lexical.Tokenize(kw) {
			if seen[t] || askingWords()[t] || len(terms) == MaxKeywords {
				continue
			}
			seen[t] = true
			terms = append(terms, lexical.Term{Text: t, Weight: 1})
		}
	}
	return terms
}

// feedback returns the feedback part of the second search (RM3
// pseudo-relevance feedback): the scale of the query's own terms,
// 1 − feedbackShare, and the nfb terms of the first search's best pages
// (hits, best first), weighted by the pages' scores and the terms' IDF,
// sharing feedbackShare of the query's weight. qterms are the query's
// terms (queryTerms); nfb is feedbackTerms, or listFeedbackTerms for a
// list question. The index scores the expanded query from the first
// search's scores (SearchTermsFeedback).
func feedback(st *Pages, qterms []lexical.Term, hits []lexical.Hit, nfb int) (float64, []lexical.Term) {
	if len(qterms) == 0 || len(hits) == 0 {
		return 1, nil
	}
	qweight := 0.0
	for _, t := range qterms {
		qweight += t.Weight
	}
	fb := make(map[string]float64)
	total := 0.0
	for _, h := range hits[:min(feedbackDocs, len(hits))] {
		total += h.Score
	}
	// A page's terms and their counts are read from the index, which
	// holds Tokenize's of the page's text: tokenizing the text again cost
	// more than the search. Each occurrence adds its share in turn, so
	// that the sums are those of adding them token by token.
	type termCount struct {
		t  string
		tf int
	}
	var counts []termCount
	for _, h := range hits[:min(feedbackDocs, len(hits))] {
		counts = counts[:0]
		ntoks := 0
		st.Index.DocTerms(h.ID, func(t string, tf int) {
			counts = append(counts, termCount{t, tf})
			ntoks += tf
		})
		for _, c := range counts {
			for range c.tf {
				fb[c.t] += h.Score / total / float64(ntoks)
			}
		}
	}
	type tw struct {
		t string
		w float64
	}
	var cand []tw
	for t, w := range fb {
		cand = append(cand, tw{t, w * st.Index.IDF(t)})
	}
	slices.SortFunc(cand, func(a, b tw) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
	cand = cand[:min(nfb, len(cand))]
	sum := 0.0
	for _, c := range cand {
		sum += c.w
	}
	// In a fixed order: the scores are sums over the terms, and a sum
	// taken in map order differs in its last digits from run to run, which
	// swapped pages that tie.
	slices.SortFunc(cand, func(a, b tw) int { return cmp.Compare(a.t, b.t) })
	extra := make([]lexical.Term, 0, len(cand))
	for _, c := range cand {
		if sum > 0 {
			extra = append(extra, lexical.Term{Text: c.t, Weight: feedbackShare * c.w / sum * qweight})
		}
	}
	return 1 - feedbackShare, extra
}
