package lexical

import (
	"cmp"
	"slices"
)

// FieldScorer scores documents indexed by AddFields on a weighted query
// by BM25F: each field's counts of a term normalised by that field's
// length against its average over the index, weighed, and summed before
// BM25's saturation. A short first field that holds the query's words
// then scores as the short text it is, rather than being divided by a
// long second field beside it. The counts are the index's: a document
// keeps its first field's terms apart (AddFields).
// A FieldScorer is for one goroutine; the index may change meanwhile.
type FieldScorer struct {
	ix      *Index
	weight  [2]float64
	entries []fieldEntry   // the query's distinct terms and prefix terms
	byText  map[string]int // entry of each term's text
	gen     uint64         // the index's gen when tids were looked up; 0 for never
	order   []int          // entries with a term in the index, by tid
	tids    []int32        // their tids
	tfs     []int32        // ScoresOf's counts, by document and entry
}

// fieldEntry is one term of a FieldScorer's query, or the prefix term of
// one: tid is the index's and w its IDF times (k1 + 1), tf the counts
// read for one document.
type fieldEntry struct {
	text    string
	prefix  bool
	weight  float64 // the query's weight (a word's, for a prefix term)
	pre     int     // for a word, the entry of its prefix term; else -1
	tid     int32
	w       float64
	tf, tf0 float64 // in the whole document, in its first field
}

// NewFieldScorer returns a scorer of the query terms (weighted as in
// SearchTerms: terms of weight 0 or less are ignored, a term listed twice
// counts twice), the first field's counts weighing weight[0] and the
// second's weight[1].
func (ix *Index) NewFieldScorer(terms []Term, weight [2]float64) *FieldScorer {
	f := &FieldScorer{ix: ix, weight: weight, byText: make(map[string]int)}
	var pre []byte
	for _, t := range terms {
		if t.Weight <= 0 {
			continue
		}
		w := f.entry(t.Text, false)
		f.entries[w].weight += t.Weight
		if p, ok := appendPrefix(pre[:0], t.Text); ok {
			pre = p
			f.entries[w].pre = f.entry(string(p), true)
		}
	}
	return f
}

// entry returns the entry of term text, adding it if need be.
func (f *FieldScorer) entry(text string, prefix bool) int {
	if e, ok := f.byText[text]; ok {
		return e
	}
	f.byText[text] = len(f.entries)
	f.entries = append(f.entries, fieldEntry{text: text, prefix: prefix, pre: -1, tid: -1})
	return len(f.entries) - 1
}

// Scores returns document id's BM25 score on the query, whole (what the
// index's searches give it), and its BM25F score, split. Both are 0 for
// a document not in the index. As in a search, each word scores the better
// of its own term and prefixWeight times its prefix term.
func (f *FieldScorer) Scores(id int) (whole, split float64) {
	f.ScoresOf([]int{id}, func(_ int, w, s float64) { whole, split = w, s })
	return whole, split
}

// ScoresOf calls fn with the scores of each of ids (Scores), in ascending
// order of id; it sorts ids. The postings of each query term are read
// once, in order, for all of them: one search of a term's postings per
// document cost most of the time, in misses of the cache.
func (f *FieldScorer) ScoresOf(ids []int, fn func(id int, whole, split float64)) {
	ix := f.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slices.Sort(ids)
	f.lookup()
	m := len(f.order)
	f.tfs = append(f.tfs[:0], make([]int32, len(ids)*m)...)
	for k, i := range f.order {
		e := &f.entries[i]
		l := &ix.lists[e.tid]
		j := 0
		for r, id := range ids {
			j = seek(l.docs, j, int32(id))
			if j < len(l.docs) && l.docs[j] == int32(id) {
				f.tfs[r*m+k] = ix.tf(l, e.tid, j)
			}
		}
	}
	for r, id := range ids {
		w, s := f.scores(id, f.tfs[r*m:(r+1)*m])
		fn(id, w, s)
	}
}

// seek returns the position of the first of docs (ascending) at or
// after from that is at least id: galloping, then a binary search.
func seek(docs []int32, from int, id int32) int {
	step, hi := 1, from
	for hi < len(docs) && docs[hi] < id {
		from = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(docs))
	j, _ := slices.BinarySearch(docs[from:hi], id)
	return from + j
}

// scores is Scores for id, whose counts of the terms of f.order are tfs;
// the caller holds ix.mu.
func (f *FieldScorer) scores(id int, tfs []int32) (whole, split float64) {
	ix := f.ix
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live || ix.total == 0 || len(f.order) == 0 {
		return 0, 0
	}
	for k, i := range f.order {
		f.entries[i].tf, f.entries[i].tf0 = float64(tfs[k]), 0
	}
	switch hl := ix.heads[id]; {
	case hl == ix.lens[id]: // the first field alone
		for _, i := range f.order {
			f.entries[i].tf0 = f.entries[i].tf
		}
	case hl > 0:
		// The first field's terms and the entries, both by tid, are
		// merged.
		j := 0
		for it := ix.docs[id].headIter(); it.next() && j < len(f.tids); {
			for j < len(f.tids) && f.tids[j] < it.tid {
				j++
			}
			if j < len(f.tids) && f.tids[j] == it.tid {
				f.entries[f.order[j]].tf0 = float64(it.tf)
				j++
			}
		}
	}
	n := float64(ix.live)
	dl, hl := float64(ix.lens[id]), float64(ix.heads[id])
	normWhole := ix.k1 * (1 - ix.b + ix.b*dl*n/float64(ix.total))
	// Each field is normalised by its average length over the index.
	var norm [2]float64
	for k, sum := range [2]int64{ix.htotal, ix.total - ix.htotal} {
		norm[k] = 1
		if sum > 0 {
			fl := hl
			if k == 1 {
				fl = dl - hl
			}
			norm[k] = 1 - ix.b + ix.b*fl*n/float64(sum)
		}
	}
	score := func(e *fieldEntry) (w, s float64) {
		if e.tid < 0 || e.tf == 0 {
			return 0, 0
		}
		i := e.w
		tf0 := min(e.tf0, e.tf)
		tf := f.weight[0]*tf0/norm[0] + f.weight[1]*(e.tf-tf0)/norm[1]
		return i * e.tf / (e.tf + normWhole), i * tf / (tf + ix.k1)
	}
	for i := range f.entries {
		e := &f.entries[i]
		if e.prefix {
			continue
		}
		w, s := score(e)
		if e.pre >= 0 {
			pw, ps := score(&f.entries[e.pre])
			w, s = max(w, prefixWeight*pw), max(s, prefixWeight*ps)
		}
		whole += e.weight * w
		split += e.weight * s
	}
	return whole, split
}

// lookup reads the entries' term ids and document frequencies from the
// index, unless it has not changed since they were read. The caller
// holds ix.mu.
func (f *FieldScorer) lookup() {
	ix := f.ix
	if f.gen == ix.gen+1 {
		return
	}
	f.gen = ix.gen + 1
	f.order = f.order[:0]
	for i := range f.entries {
		e := &f.entries[i]
		e.tid, e.w = -1, 0
		if tid, ok := ix.terms[e.text]; ok && ix.lists[tid].df > 0 {
			e.tid, e.w = tid, idf(float64(ix.lists[tid].df), float64(ix.live))*(ix.k1+1)
			f.order = append(f.order, i)
		}
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(f.entries[a].tid, f.entries[b].tid) })
	f.tids = f.tids[:0]
	for _, i := range f.order {
		f.tids = append(f.tids, f.entries[i].tid)
	}
}
