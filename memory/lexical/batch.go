package lexical

import (
	"fmt"
	"runtime"
)

// batchRound is how many documents AddBatch tokenizes and then inserts at
// a time.
const batchRound = 512

// AddBatch indexes texts[i] as document ids[i] for each i in order, leaving
// the index exactly as that many calls to Add would. The texts are
// tokenized in parallel, a goroutine per CPU, while the index is locked
// only to insert each round of tokenized documents, so searches running
// meanwhile may see part of the batch. AddBatch panics, before changing
// anything, if the slices differ in length or an id is out of range (see
// Add).
func (ix *Index) AddBatch(ids []int, texts []string) {
	ix.addBatch(ids, texts, nil, batchRound)
}

// AddFields is AddBatch for documents of two fields, such as the two sides
// of an exchange: texts[i] is the fields joined, its first heads[i] bytes
// the first field, whose terms (those ending within them) are counted
// apart: the search scores such a document by BM25F (norms), and one
// whose heads[i] is 0 by BM25, as AddBatch's. The fields must be joined
// by a byte that is no part of a word, such as a line break.
func (ix *Index) AddFields(ids []int, texts []string, heads []int) {
	if len(heads) != len(texts) {
		panic(fmt.Sprintf("lexical: AddFields of %d texts and %d heads", len(texts), len(heads)))
	}
	ix.addBatch(ids, texts, heads, batchRound)
}

// addBatch is AddBatch, heads (nil for none) being AddFields'.
func (ix *Index) addBatch(ids []int, texts []string, heads []int, round int) {
	if len(ids) != len(texts) {
		panic(fmt.Sprintf("lexical: AddBatch of %d ids and %d texts", len(ids), len(texts)))
	}
	head := func(i int) int {
		if heads == nil {
			return 0
		}
		return heads[i]
	}
	for _, id := range ids {
		checkID(id)
	}
	rounds := (len(ids) + round - 1) / round
	workers := min(runtime.GOMAXPROCS(0), rounds)
	if workers <= 1 {
		for i, id := range ids {
			ix.add(id, texts[i], head(i))
		}
		return
	}

	// Worker w tokenizes rounds w, w+workers, …, into term ids of its own
	// dictionary; this goroutine inserts the rounds in order, mapping the
	// worker's term ids to the index's.
	out := make([]chan tokenized, workers)
	for w := range out {
		out[w] = make(chan tokenized, 2)
		go func() {
			d := dictionary{ids: make(map[string]int32)}
			for r := w; r < rounds; r += workers {
				lo, hi := r*round, min(len(texts), (r+1)*round)
				var hs []int
				if heads != nil {
					hs = heads[lo:hi]
				}
				out[w] <- d.tokenize(texts[lo:hi], hs)
			}
		}()
	}
	maps := make([]termMap, workers)
	for r := range rounds {
		t := <-out[r%workers]
		m := &maps[r%workers]
		ix.mu.Lock()
		ix.gen++
		start := 0
		for j, end := range t.ends {
			id := ids[r*round+j]
			ix.clear(id)
			ix.ids = m.global(ix, t.terms, t.toks[start:end], ix.ids[:0])
			ix.link(id, ix.ids, t.heads[j])
			start = end
		}
		ix.mu.Unlock()
	}
}

// dictionary numbers the terms one AddBatch worker has seen.
type dictionary struct {
	ids   map[string]int32
	terms []string // by id
	tok   tokenizer
	pre   []byte // the current prefix term
}

// id returns the dictionary id of term, numbering it if it is new.
func (d *dictionary) id(term []byte) int32 {
	if id, ok := d.ids[string(term)]; ok {
		return id
	}
	id := int32(len(d.terms))
	d.ids[string(term)] = id
	d.terms = append(d.terms, string(term))
	return id
}

// tokenized is one round of documents as term ids of a worker's
// dictionary.
type tokenized struct {
	terms []string // the dictionary's terms when the round was done
	toks  []int32  // the documents' terms in text order, one after another
	ends  []int    // the end in toks of each document
	heads []int    // the terms of each document's first field
}

// tokenize numbers the terms of texts, heads (nil for none) being the
// byte lengths of their first fields.
func (d *dictionary) tokenize(texts []string, heads []int) tokenized {
	t := tokenized{ends: make([]int, 0, len(texts)), heads: make([]int, 0, len(texts))}
	for i, text := range texts {
		head, start, n := 0, len(t.toks), 0
		if heads != nil {
			head = heads[i]
		}
		d.tok.reset(text)
		for tok, ok := d.tok.next(); ok; tok, ok = d.tok.next() {
			t.toks = append(t.toks, d.id(tok))
			if p, ok := appendPrefix(d.pre[:0], tok); ok {
				t.toks = append(t.toks, d.id(p))
				d.pre = p
			}
			if d.tok.pos <= head {
				n = len(t.toks) - start
			}
		}
		t.ends = append(t.ends, len(t.toks))
		t.heads = append(t.heads, n)
	}
	// The worker appends to d.terms past this length only, so the
	// inserting goroutine may read this prefix as the worker goes on.
	t.terms = d.terms
	return t
}

// termMap caches the index's term id of each term of a worker's
// dictionary. An entry holds while the index frees no term (ix.freed).
type termMap struct {
	tids  []int32
	valid []uint64 // ix.freed+1 when the entry was made
}

// global appends to dst the index term ids of the dictionary term ids
// toks, creating the terms the index lacks. The caller holds ix.mu.
func (m *termMap) global(ix *Index, terms []string, toks, dst []int32) []int32 {
	if n := len(terms); n > len(m.tids) {
		m.tids = append(m.tids, make([]int32, n-len(m.tids))...)
		m.valid = append(m.valid, make([]uint64, n-len(m.valid))...)
	}
	stamp := ix.freed + 1
	for _, l := range toks {
		if m.valid[l] != stamp {
			tid, ok := ix.terms[terms[l]]
			if !ok {
				tid = ix.newTerm(terms[l])
			}
			m.tids[l], m.valid[l] = tid, stamp
		}
		dst = append(dst, m.tids[l])
	}
	return dst
}
