package lexical

import (
	"cmp"
	"math"
	"slices"
)

// Hit is a document that matches a search.
type Hit struct {
	ID    int     // the document id given to Add
	Score float64 // BM25 score, greater than 0
}

// scratch is the per-search working memory, pooled per Index. scores is
// indexed by doc id and is all zeros between searches; touched lists the
// ids whose score is not.
type scratch struct {
	tok     tokenizer
	pre     []byte // the current query word's prefix term
	q       []int32
	qp      [][2]int32 // prefix term and word term (or -1) of query words
	scores  []float64
	touched []int32
	heap    []Hit
}

// Search returns up to k documents that share terms with query, best first;
// equal scores put the higher (newer) id first. Documents for which keep
// returns false are skipped; keep may be nil. keep is called without the
// index locked (it may use the index) and only for documents that score high
// enough to enter the current top k, in no particular order.
//
// A term repeated in the query counts that many times. Scores are BM25 with
// IDF ln(1 + (N − df + 0.5)/(df + 0.5)), N the number of documents.
func (ix *Index) Search(query string, k int, keep func(id int) bool) []Hit {
	if k <= 0 {
		return nil
	}
	s := ix.scratch.Get().(*scratch)
	ix.mu.RLock()
	ix.accumulate(s, query)
	ix.mu.RUnlock()
	hits := s.top(k, keep)
	ix.scratch.Put(s) // not deferred: a panicking keep leaves s dirty
	return hits
}

// accumulate adds up, term at a time, the BM25 score of every live
// document containing a query term into s.scores.
func (ix *Index) accumulate(s *scratch, query string) {
	if ix.live == 0 || ix.total == 0 {
		return
	}
	s.q, s.qp = s.q[:0], s.qp[:0]
	s.tok.reset(query)
	for tok, ok := s.tok.next(); ok; tok, ok = s.tok.next() {
		tid, ok := ix.terms[string(tok)]
		if ok && ix.lists[tid].df > 0 {
			s.q = append(s.q, tid)
		} else {
			tid = -1
		}
		if p, ok := appendPrefix(s.pre[:0], tok); ok {
			s.pre = p
			if ptid, ok := ix.terms[string(p)]; ok && ix.lists[ptid].df > 0 && (tid < 0 || ix.lists[ptid].words != 1) {
				s.qp = append(s.qp, [2]int32{ptid, tid})
			}
		}
	}
	slices.Sort(s.q)
	for i := 0; i < len(s.q); {
		j := i + 1
		for j < len(s.q) && s.q[j] == s.q[i] {
			j++
		}
		ix.accumulateTerm(s, s.q[i], float64(j-i), true)
		i = j
	}
	slices.SortFunc(s.qp, func(a, b [2]int32) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for i := 0; i < len(s.qp); {
		j := i + 1
		for j < len(s.qp) && s.qp[j] == s.qp[i] {
			j++
		}
		ix.accumulatePrefix(s, s.qp[i][0], s.qp[i][1], float64(j-i), true)
		i = j
	}
}

// norms holds what a search needs to normalise each document's counts
// by its length: BM25's for a document of one field, and BM25F's for one
// of two (AddFields), each field's counts normalised by that field's
// length against its average over the index, summed, then saturated
// once. A short first field that holds the query's words then scores as
// the short text it is, rather than divided by a long second field beside
// it ("My first marathon was yesterday" above a reply of 300 words).
type norms struct {
	k1, c1, c2 float64 // BM25: tf / (tf + c1 + c2·length)
	a, h, r    float64 // BM25F: each field's norm is a + (h or r)·its length
	lens       []int32
	heads      []int32
}

func (ix *Index) norms() norms {
	n := float64(ix.live)
	nm := norms{
		k1: ix.k1, c1: ix.k1 * (1 - ix.b), c2: ix.k1 * ix.b * n / float64(ix.total), // k1·b / average length
		a: 1 - ix.b, lens: ix.lens, heads: ix.heads,
	}
	if ix.htotal > 0 {
		nm.h = ix.b * n / float64(ix.htotal)
	}
	if rest := ix.total - ix.htotal; rest > 0 {
		nm.r = ix.b * n / float64(rest)
	}
	return nm
}

// field returns w times the saturated BM25F count of a term in document
// doc of two fields, which holds it tf times, hf of them in its first:
// with each field's norm n0 and n1, x = hf/n0 + (tf-hf)/n1 saturated as
// x/(x+k1), written with one division.
func (nm *norms) field(w float64, doc int32, tf, hf float64) float64 {
	hl := nm.heads[doc]
	n0, n1 := nm.a+nm.h*float64(hl), 1.0
	if rl := nm.lens[doc] - hl; rl > 0 {
		n1 = nm.a + nm.r*float64(rl)
	}
	num := hf*n1 + (tf-hf)*n0
	return w * num / (num + nm.k1*n0*n1)
}

// accumulateTerm adds weight times the BM25 contribution of term tid (with
// fields, its BM25F one in a document of two fields: norms) to the score
// of every live document that contains it.
func (ix *Index) accumulateTerm(s *scratch, tid int32, weight float64, fields bool) {
	if len(s.scores) < len(ix.lens) {
		s.scores = make([]float64, len(ix.lens)+len(ix.lens)/4)
	}
	scores, lens := s.scores, ix.lens
	nm := ix.norms()
	l := &ix.lists[tid]
	w := weight * idf(float64(l.df), float64(ix.live)) * (ix.k1 + 1)
	tfs := l.tfs[:len(l.docs)]
	rfs := l.rfs[:len(l.docs)]
	// Each document is written to touched, which is counted on only
	// where it had no score: no branch on whether it had (a third to
	// two thirds of a common term's documents had none, unpredictably).
	touched := slices.Grow(s.touched, len(l.docs))
	k := len(touched)
	touched = touched[:k+len(l.docs)]
	for j, doc := range l.docs {
		if lens[doc] == 0 { // removed, awaiting compaction
			continue
		}
		tf := float64(tfs[j])
		if tfs[j] == tfOverflow {
			tf = float64(ix.tf(l, tid, j))
		}
		hf := tf - float64(rfs[j])
		var add float64
		if !fields || nm.heads[doc] == 0 {
			add = w * tf / (tf + nm.c1 + nm.c2*float64(lens[doc]))
		} else {
			add = nm.field(w, doc, tf, hf)
		}
		sc := scores[doc]
		touched[k] = doc
		if sc == 0 {
			k++
		}
		scores[doc] = sc + add
	}
	s.touched = touched[:k]
}

// accumulatePrefix adds the prefix field's share for one query word: to
// every live document containing prefix term ptid, weight times the amount
// by which prefixWeight times that term's contribution exceeds the
// contribution of the word's own term tid (-1 if none), which
// accumulateTerm added. A document thus scores the better of the exact
// and the prefix match of each word, never both.
func (ix *Index) accumulatePrefix(s *scratch, ptid, tid int32, weight float64, fields bool) {
	if len(s.scores) < len(ix.lens) {
		s.scores = make([]float64, len(ix.lens)+len(ix.lens)/4)
	}
	scores, lens := s.scores, ix.lens
	nm := ix.norms()
	n := float64(ix.live)
	l := &ix.lists[ptid]
	w := prefixWeight * idf(float64(l.df), n) * (ix.k1 + 1)
	var el *postings // the exact term's postings, walked beside l's
	e := 0
	we := 0.0
	if tid >= 0 {
		el = &ix.lists[tid]
		we = idf(float64(el.df), n) * (ix.k1 + 1)
	}
	tfs := l.tfs[:len(l.docs)]
	touched := slices.Grow(s.touched, len(l.docs)) // as in accumulateTerm
	k := len(touched)
	touched = touched[:k+len(l.docs)]
	for j, doc := range l.docs {
		if lens[doc] == 0 {
			continue
		}
		tf := float64(tfs[j])
		if tfs[j] == tfOverflow {
			tf = float64(ix.tf(l, ptid, j))
		}
		norm := nm.c1 + nm.c2*float64(lens[doc])
		one := !fields || nm.heads[doc] == 0
		var add float64
		if one {
			add = w * tf / (tf + norm)
		} else {
			add = nm.field(w, doc, tf, l.hf(j, tf))
		}
		if el != nil {
			for e < len(el.docs) && el.docs[e] < doc {
				e++
			}
			if e < len(el.docs) && el.docs[e] == doc {
				etf := float64(el.tfs[e])
				if el.tfs[e] == tfOverflow {
					etf = float64(ix.tf(el, tid, e))
				}
				if one {
					add -= we * etf / (etf + norm)
				} else {
					add -= nm.field(we, doc, etf, el.hf(e, etf))
				}
			}
		}
		if add <= 0 {
			continue
		}
		sc := scores[doc]
		touched[k] = doc
		if sc == 0 {
			k++
		}
		scores[doc] = sc + weight*add
	}
	s.touched = touched[:k]
}

// Term is an analysed query term (one of Tokenize's outputs) with the
// weight of its BM25 contribution.
type Term struct {
	Text   string
	Weight float64
}

// SearchTerms is Search for a weighted query of analysed terms, such as a
// query expanded with feedback terms. Terms unknown to the index and terms
// of weight 0 or less are ignored; a term listed twice counts twice.
func (ix *Index) SearchTerms(terms []Term, k int, keep func(id int) bool) []Hit {
	if k <= 0 {
		return nil
	}
	s := ix.scratch.Get().(*scratch)
	ix.mu.RLock()
	ix.accumulateTerms(s, terms, 1, true)
	ix.mu.RUnlock()
	hits := s.top(k, keep)
	ix.scratch.Put(s)
	return hits
}

// accumulateTerms adds scale times the score on terms (SearchTerms'
// weighted query) of every live document into s.scores: BM25, or with
// fields BM25F for a document of two fields.
func (ix *Index) accumulateTerms(s *scratch, terms []Term, scale float64, fields bool) {
	if ix.live == 0 || ix.total == 0 {
		return
	}
	for _, t := range terms {
		w := t.Weight * scale
		if w <= 0 {
			continue
		}
		tid, ok := ix.terms[t.Text]
		if ok && ix.lists[tid].df > 0 {
			ix.accumulateTerm(s, tid, w, fields)
		} else {
			tid = -1
		}
		if p, ok := appendPrefix(s.pre[:0], t.Text); ok {
			s.pre = p
			// A prefix term of one word, the term itself, would add
			// nothing where the term scored (see postings.words).
			if ptid, ok := ix.terms[string(p)]; ok && ix.lists[ptid].df > 0 && (tid < 0 || ix.lists[ptid].words != 1) {
				ix.accumulatePrefix(s, ptid, tid, w, fields)
			}
		}
	}
}

// SearchTermsFeedback searches terms as SearchTerms does, then lets expand
// read those hits (at most k, best first) and name a scale and extra
// terms, and returns the first hits and those of the expanded query: the
// query whose terms are terms with their weights times scale, followed by
// extra. Its scores are every document's first score times scale plus its
// score on extra, without scoring the first terms again, which costs most
// when they are common words and extra are rare ones. A document of two
// fields (AddFields) is scored on terms by BM25F, as SearchTerms scores
// it, and on extra by BM25, as one text: extra are feedback terms, drawn
// from the best documents' whole texts rather than from what the query
// asks of either field.
// expand is called without the index locked and may use it; when the
// index changed meanwhile, the expanded query is scored afresh.
func (ix *Index) SearchTermsFeedback(terms []Term, k int, expand func(first []Hit) (scale float64, extra []Term)) (first, second []Hit) {
	if k <= 0 {
		return nil, nil
	}
	s := ix.scratch.Get().(*scratch)
	ix.mu.RLock()
	gen := ix.gen
	ix.accumulateTerms(s, terms, 1, true)
	ix.mu.RUnlock()
	first = s.peek(k)
	scale, extra := expand(first)
	ix.mu.RLock()
	if ix.gen != gen || scale <= 0 {
		s.reset()
		ix.accumulateTerms(s, terms, scale, true)
	} else if scale != 1 {
		for _, d := range s.touched {
			s.scores[d] *= scale
		}
	}
	ix.accumulateTerms(s, extra, 1, false)
	ix.mu.RUnlock()
	second = s.top(k, nil)
	ix.scratch.Put(s)
	return first, second
}

// IDF returns the inverse document frequency of an analysed term, as used
// in scores, and 0 for a term no live document contains.
func (ix *Index) IDF(term string) float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	tid, ok := ix.terms[term]
	if !ok || ix.lists[tid].df == 0 {
		return 0
	}
	return idf(float64(ix.lists[tid].df), float64(ix.live))
}

// peek returns the k best documents of s, best first, as top does with
// no keep, leaving the scores in place for more terms to add to.
func (s *scratch) peek(k int) []Hit {
	return s.best(k, nil, false)
}

// reset zeroes the scores of s.
func (s *scratch) reset() {
	for _, d := range s.touched {
		s.scores[d] = 0
	}
	s.touched = s.touched[:0]
}

// top selects the k best touched documents that keep accepts, and clears
// the scores it read.
func (s *scratch) top(k int, keep func(int) bool) []Hit {
	return s.best(k, keep, true)
}

// best returns the k best documents of s that keep accepts, best first;
// with clear it zeroes their scores for the next search.
func (s *scratch) best(k int, keep func(int) bool, clear bool) []Hit {
	h := s.heap[:0]
	// Once k are kept, the worst of them (h[0]) is the bar, held in a
	// local: most documents fall below it (worse, which a document
	// equal to it cannot be: each is touched once).
	full, bar := false, Hit{}
	scores := s.scores
	for _, d := range s.touched {
		sc := scores[d]
		if clear {
			scores[d] = 0
		}
		if full && (sc < bar.Score || sc == bar.Score && int(d) < bar.ID) {
			continue
		}
		hit := Hit{ID: int(d), Score: sc}
		if keep != nil && !keep(hit.ID) {
			continue
		}
		if len(h) < k {
			h = append(h, hit)
			siftUp(h, len(h)-1)
		} else {
			h[0] = hit
			siftDown(h, 0)
		}
		if len(h) == k {
			full, bar = true, h[0]
		}
	}
	if clear {
		s.touched = s.touched[:0]
	}
	s.heap = h
	if len(h) == 0 {
		return nil
	}
	hits := slices.Clone(h)
	slices.SortFunc(hits, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return hits
}

// Similarity scores text as if it were a document of the index, against
// query, with the index's document count, document frequencies and average
// length: a BM25 score comparable to Search's, for ranking a few candidates
// that are not indexed. It returns 0 when they share no term.
func (ix *Index) Similarity(query, text string) float64 {
	q, t := Tokenize(query), indexTerms(text)
	if len(q) == 0 || len(t) == 0 {
		return 0
	}
	slices.Sort(q)
	slices.Sort(t)
	dl := float64(len(t))
	count := func(term string) float64 {
		lo, found := slices.BinarySearch(t, term)
		if !found {
			return 0
		}
		hi := lo + 1
		for hi < len(t) && t[hi] == term {
			hi++
		}
		return float64(hi - lo)
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n, avgdl := float64(ix.live), dl
	if ix.live > 0 && ix.total > 0 {
		avgdl = float64(ix.total) / n
	}
	norm := ix.k1 * (1 - ix.b + ix.b*dl/avgdl)
	bm25 := func(term string) float64 {
		tf := count(term)
		if tf == 0 {
			return 0
		}
		df := 0.0
		if tid, ok := ix.terms[term]; ok {
			df = float64(ix.lists[tid].df)
		}
		return idf(df, n) * (ix.k1 + 1) * tf / (tf + norm)
	}
	score := 0.0
	var pre []byte
	for i := 0; i < len(q); {
		j := i + 1
		for j < len(q) && q[j] == q[i] {
			j++
		}
		sc := bm25(q[i])
		if p, ok := appendPrefix(pre[:0], q[i]); ok {
			pre = p
			sc = max(sc, prefixWeight*bm25(string(p)))
		}
		score += float64(j-i) * sc
		i = j
	}
	return score
}

// idf is BM25's inverse document frequency of a term in df of n documents;
// it is positive even for a term in every document.
func idf(df, n float64) float64 {
	return math.Log1p((n - df + 0.5) / (df + 0.5))
}

// worse orders hits: lower score, then lower (older) id.
func worse(a, b Hit) bool {
	return a.Score < b.Score || a.Score == b.Score && a.ID < b.ID
}

// siftUp and siftDown maintain h as a min-heap under worse: h[0] is the
// worst hit kept so far.
func siftUp(h []Hit, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(h[i], h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func siftDown(h []Hit, i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h) && worse(h[c], h[least]) {
				least = c
			}
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
