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
// long second field beside it. It reads the second field's counts from
// the index and tokenizes only the first field, which the caller passes.
// A FieldScorer is for one goroutine; the index may change meanwhile.
type FieldScorer struct {
	ix      *Index
	weight  [2]float64
	entries []fieldEntry   // the query's distinct terms and prefix terms
	byText  map[string]int // entry of each term's text
	starts  Starts         // how the entries' terms begin
	gen     uint64         // the index's gen when tids were looked up; 0 for never
	order   []int          // entries with a term in the index, by tid
	pre     []byte         // a word's prefix term, in Scores
}

// fieldEntry is one term of a FieldScorer's query, or the prefix term of
// one: tid and df are the index's, tf the counts read for one document.
type fieldEntry struct {
	text    string
	prefix  bool
	weight  float64 // the query's weight (a word's, for a prefix term)
	pre     int     // for a word, the entry of its prefix term; else -1
	tid     int32
	df      float64
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
	if prefix {
		f.starts.Add(text[1:])
	} else {
		f.starts.Add(text)
	}
	return len(f.entries) - 1
}

// Scores returns document id's BM25 score on the query, whole (what the
// index's searches give it), and its BM25F score, split; first is the
// document's first field as given to AddFields. Both are 0 for a
// document not in the index. As in a search, each word scores the better
// of its own term and prefixWeight times its prefix term.
func (f *FieldScorer) Scores(id int, first string) (whole, split float64) {
	ix := f.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live || ix.total == 0 {
		return 0, 0
	}
	f.lookup()
	if len(f.order) == 0 {
		return 0, 0
	}
	for i := range f.entries {
		f.entries[i].tf, f.entries[i].tf0 = 0, 0
	}
	// The document's terms and the entries, both by tid, are merged.
	j := 0
	for it := ix.docs[id].iter(); it.next() && j < len(f.order); {
		for j < len(f.order) && f.entries[f.order[j]].tid < it.tid {
			j++
		}
		if j < len(f.order) && f.entries[f.order[j]].tid == it.tid {
			f.entries[f.order[j]].tf = float64(it.tf)
			j++
		}
	}
	if ix.heads[id] > 0 {
		AnyTermStarting(first, &f.starts, func(t []byte) bool {
			if e, ok := f.byText[string(t)]; ok {
				f.entries[e].tf0++
			}
			if p, ok := appendPrefix(f.pre[:0], t); ok {
				f.pre = p
				if e, ok := f.byText[string(p)]; ok {
					f.entries[e].tf0++
				}
			}
			return false
		})
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
		i := idf(e.df, n) * (ix.k1 + 1)
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
		e.tid, e.df = -1, 0
		if tid, ok := ix.terms[e.text]; ok && ix.lists[tid].df > 0 {
			e.tid, e.df = tid, float64(ix.lists[tid].df)
			f.order = append(f.order, i)
		}
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(f.entries[a].tid, f.entries[b].tid) })
}
