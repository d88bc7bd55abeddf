// Package lexical is an in-memory full-text index with BM25 ranking, updated
// one document at a time. mnemo uses it to find conversation pages and facts
// that share words with a query. The analyzer (Tokenize) folds case and
// Latin diacritics, stems English (Porter2), and indexes Chinese, Japanese
// and Korean as character bigrams, so it needs no dictionary. A second,
// lower-weighted field of five-letter stem prefixes lets derivations
// ("deploy", "deployment") meet. A document indexed with two fields
// (AddFields: an exchange's user words, then the reply) is scored by
// BM25F, each field normalised by its own length.
//
// Documents are identified by small non-negative ints that the caller
// assigns, densely (0, 1, 2, …); memory is proportional to the largest id.
// Search scores only the postings of the query's terms, so its cost grows
// with how common those terms are, not with the size of the index.
package lexical

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Options tunes BM25 ranking.
type Options struct {
	// K1 is the term-frequency saturation: how much a second, third, …
	// occurrence of a term adds. Zero (or negative) means 1.2.
	K1 float64
	// B is the length normalisation, from 0 (none) to 1 (full): how much
	// a longer document is penalised. Zero (or negative) means 0.75; values
	// above 1 mean 1.
	B float64
}

// Index is an in-memory inverted index with BM25 ranking. It is safe for
// concurrent use: searches run in parallel, writes one at a time.
type Index struct {
	k1, b float64

	mu      sync.RWMutex
	terms   map[string]int32 // term → term id, an index into lists
	lists   []postings       // by term id
	free    []int32          // term ids of emptied lists, for reuse
	docs    []doc            // by doc id
	lens    []int32          // by doc id: tokens in a live document, else 0
	heads   []int32          // by doc id: tokens of a live document's first field (AddFields)
	live    int              // live documents
	total   int64            // tokens in live documents
	htotal  int64            // tokens of live documents' first fields
	npost   int              // postings held, stale ones included
	stale   int              // postings of removed documents, not yet compacted
	removed []int32          // documents whose postings are stale
	tok     tokenizer        // Add's, guarded by mu
	ids     []int32          // Add's term ids, guarded by mu
	pre     []byte           // Add's prefix term, guarded by mu
	pack    []byte           // link's packed terms, guarded by mu
	hids    []int32          // link's first-field term ids, guarded by mu
	freed   uint64           // terms freed so far, to expire AddBatch's caches
	gen     uint64           // changes so far (Add, AddBatch, Remove), for SearchTermsFeedback

	scratch sync.Pool // *scratch, for Search
}

// postings lists the documents containing one term, by ascending doc id.
// The documents and their counts are two arrays, five bytes a posting
// rather than eight: a count of tfOverflow or more is kept as tfOverflow
// and read from the document's terms (tf).
type postings struct {
	term string
	df   int32 // live documents in docs
	// words, of a prefix term, counts the word terms of the index that
	// have it as their prefix term: when that is one, the prefix term is
	// in the same documents as the word, as often, and adds nothing to
	// its score (accumulateTerms skips it).
	words int32
	docs  []int32 // ascending
	tfs   []uint8 // the count of the term in each of docs, at most tfOverflow
	// rfs holds, for each of docs, the count of the term in the
	// document's second field (AddFields; for a document of one field,
	// its count), at most 255: a count of 255 or more in a reply is kept
	// at 255. One byte a posting, rather than the first field's terms kept
	// with each document, and the count in the first field is the count
	// less it, with no branch: BM25F is scored in the postings walk
	// (accumulateTerm).
	rfs []uint8
}

// hf returns the count in the first field of the document at position j
// of l, whose whole count is tf.
func (l *postings) hf(j int, tf float64) float64 {
	return tf - float64(l.rfs[j])
}

// packRest is what postings.rfs holds for a term counted tf times in a
// document, hf of them in its first field.
func packRest(tf, hf int32) uint8 {
	return uint8(min(tf-min(hf, tf), math.MaxUint8))
}

// tfOverflow marks a count too large for postings.tfs.
const tfOverflow = math.MaxUint8

// tf returns the count of term tid in the document at position j of its
// postings.
func (ix *Index) tf(l *postings, tid int32, j int) int32 {
	if t := l.tfs[j]; t < tfOverflow {
		return int32(t)
	}
	d := &ix.docs[l.docs[j]]
	for it := d.iter(); it.next(); {
		if it.tid == tid {
			return it.tf
		}
	}
	return tfOverflow
}

type doc struct {
	// terms holds the document's distinct term ids, ascending, each with
	// its count, as uvarints: the id's difference from the one before
	// (from -1 for the first) and the count. About two bytes a term
	// rather than five in arrays, and the snapshot's own encoding, which
	// Decode copies as it is.
	terms []byte
	n     int32 // distinct terms
	state docState
}

// docTerms walks a document's packed terms:
//
//	for it := d.iter(); it.next(); { use it.tid, it.tf }
type docTerms struct {
	b       []byte
	tid, tf int32
}

func (d *doc) iter() docTerms { return docTerms{b: d.terms, tid: -1} }

// next moves to the next term; the terms were packed by packTerms or
// checked by Decode, so they are well formed.
func (it *docTerms) next() bool {
	// Most ids differ by less than 128 and most counts are below 128:
	// two bytes, read here; the rest by nextLong.
	if b := it.b; len(b) > 1 && b[0]|b[1] < 0x80 {
		it.tid, it.tf, it.b = it.tid+int32(b[0]), int32(b[1]), b[2:]
		return true
	}
	return it.nextLong()
}

func (it *docTerms) nextLong() bool {
	if len(it.b) == 0 {
		return false
	}
	delta, n := binary.Uvarint(it.b)
	tf, m := binary.Uvarint(it.b[n:])
	it.b = it.b[n+m:]
	it.tid += int32(delta)
	it.tf = int32(tf)
	return true
}

// appendTermIDs appends the term ids of packed terms b to dst: the
// loop of the callers that read only the ids, many documents at a time
// (EachDocValue), with the common one-byte numbers read in line.
func appendTermIDs(dst []int32, b []byte) []int32 {
	tid := int32(-1)
	for i := 0; i < len(b); {
		if c := b[i]; c < 0x80 {
			tid += int32(c)
			i++
		} else {
			x, n := binary.Uvarint(b[i:])
			tid += int32(x)
			i += max(n, 1)
		}
		if i < len(b) && b[i] < 0x80 {
			i++
		} else if i < len(b) {
			_, n := binary.Uvarint(b[i:])
			i += max(n, 1)
		}
		dst = append(dst, tid)
	}
	return dst
}

// appendTerm packs one term, tid after prev, with its count.
func appendTerm(b []byte, prev, tid, tf int32) []byte {
	b = binary.AppendUvarint(b, uint64(tid-prev))
	return binary.AppendUvarint(b, uint64(tf))
}

type docState uint8

const (
	absent  docState = iota
	live             // indexed and searchable
	removed          // removed; its postings wait for compact
)

// New returns an empty Index.
func New(opts Options) *Index {
	ix := &Index{k1: opts.K1, b: opts.B, terms: make(map[string]int32)}
	if ix.k1 <= 0 {
		ix.k1 = 1.2
	}
	if ix.b <= 0 {
		ix.b = 0.75
	}
	ix.b = min(ix.b, 1)
	ix.scratch.New = func() any { return new(scratch) }
	return ix
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Add indexes text as document id, replacing the document already indexed
// under id, if any. Ids are expected to be small and dense; Add panics if id
// is negative or does not fit in an int32.
func (ix *Index) Add(id int, text string) {
	ix.add(id, text, 0)
}

// add is Add for a text whose first head bytes are its first field
// (AddFields).
func (ix *Index) add(id int, text string, head int) {
	checkID(id)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	ix.clear(id)
	ids := ix.ids[:0]
	heads := 0
	ix.tok.reset(text)
	for tok, ok := ix.tok.next(); ok; tok, ok = ix.tok.next() {
		ids = append(ids, ix.termID(tok))
		if p, ok := appendPrefix(ix.pre[:0], tok); ok {
			ids = append(ids, ix.termID(p))
			ix.pre = p
		}
		if ix.tok.pos <= head {
			heads = len(ids)
		}
	}
	ix.ids = ids
	ix.link(id, ids, heads)
}

// termID returns the id of term, creating the term if need be.
func (ix *Index) termID(term []byte) int32 {
	if tid, ok := ix.terms[string(term)]; ok {
		return tid
	}
	return ix.newTerm(string(term))
}

// checkID panics unless id can be a document id.
func checkID(id int) {
	if id < 0 || id >= math.MaxInt32 {
		panic(fmt.Sprintf("lexical: document id %d out of range", id))
	}
}

// clear makes room for document id and drops what is indexed under it.
func (ix *Index) clear(id int) {
	if id >= len(ix.docs) {
		n := id + 1
		ix.docs = slices.Grow(ix.docs, n-len(ix.docs))[:n]
		ix.lens = slices.Grow(ix.lens, n-len(ix.lens))[:n]
		ix.heads = slices.Grow(ix.heads, n-len(ix.heads))[:n]
	}
	switch ix.docs[id].state {
	case live:
		ix.unlink(id)
		ix.purge(id)
	case removed:
		ix.stale -= int(ix.docs[id].n)
		ix.purge(id)
	}
}

// link indexes cleared document id as the terms ids, in text order, the
// first head of them its first field; it sorts ids.
func (ix *Index) link(id int, ids []int32, head int) {
	head = max(0, min(head, len(ids)))
	hids := append(ix.hids[:0], ids[:head]...)
	slices.Sort(hids)
	slices.Sort(ids)
	packed, prev, nd, h := ix.pack[:0], int32(-1), int32(0), 0
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		// The first field's counts, walked beside the document's.
		hf := 0
		for h < len(hids) && hids[h] < ids[i] {
			h++
		}
		for h < len(hids) && hids[h] == ids[i] {
			h, hf = h+1, hf+1
		}
		tf := int32(min(j-i, math.MaxInt32))
		l := &ix.lists[ids[i]]
		l.insert(int32(id), tf, packRest(tf, int32(min(hf, math.MaxInt32))))
		l.df++
		ix.npost++
		packed = appendTerm(packed, prev, ids[i], tf)
		prev, nd = ids[i], nd+1
		i = j
	}
	ix.pack, ix.hids = packed, hids
	ix.docs[id] = doc{terms: bytes.Clone(packed), n: nd, state: live}
	ix.lens[id] = int32(min(len(ids), math.MaxInt32))
	ix.total += int64(ix.lens[id])
	ix.heads[id] = int32(head)
	ix.htotal += int64(ix.heads[id])
	ix.live++
}

// Remove deletes document id from the index. Removing an id that is not
// indexed does nothing.
func (ix *Index) Remove(id int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live {
		return
	}
	ix.unlink(id)
	ix.docs[id].state = removed
	ix.removed = append(ix.removed, int32(id))
	ix.stale += int(ix.docs[id].n)
	// Postings are left in place, skipped by Search, and swept in one pass
	// once they are a quarter of the index: removing a document eagerly
	// would shift every long postings list it appears in.
	if ix.stale*4 >= ix.npost {
		ix.compact()
	}
}

// unlink takes live document id out of the statistics and out of searches.
func (ix *Index) unlink(id int) {
	d := &ix.docs[id]
	for it := d.iter(); it.next(); {
		ix.lists[it.tid].df--
	}
	ix.total -= int64(ix.lens[id])
	ix.htotal -= int64(ix.heads[id])
	ix.lens[id], ix.heads[id] = 0, 0
	ix.live--
}

// purge deletes the postings of document id, which is not live, at once.
func (ix *Index) purge(id int) {
	d := &ix.docs[id]
	for it := d.iter(); it.next(); {
		tid := it.tid
		l := &ix.lists[tid]
		if i, ok := l.find(int32(id)); ok {
			l.docs, l.tfs, l.rfs = slices.Delete(l.docs, i, i+1), slices.Delete(l.tfs, i, i+1), slices.Delete(l.rfs, i, i+1)
			ix.npost--
		}
		if len(l.docs) == 0 {
			ix.freeTerm(tid)
		}
	}
	ix.docs[id] = doc{}
}

// compact drops the postings of removed documents from every list they are
// in, frees the terms left with no postings and trims oversized lists.
func (ix *Index) compact() {
	touched := make([]uint64, (len(ix.lists)+63)/64)
	for _, id := range ix.removed {
		if d := &ix.docs[id]; d.state == removed {
			for it := d.iter(); it.next(); {
				touched[it.tid/64] |= 1 << (it.tid % 64)
			}
		}
	}
	for w, word := range touched {
		for word != 0 {
			tid := int32(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			l := &ix.lists[tid]
			n := 0
			for j, d := range l.docs {
				if ix.docs[d].state == live {
					l.docs[n], l.tfs[n], l.rfs[n] = d, l.tfs[j], l.rfs[j]
					n++
				}
			}
			ix.npost -= len(l.docs) - n
			switch {
			case n == 0:
				ix.freeTerm(tid)
			case cap(l.docs) > 2*n+8:
				l.docs, l.tfs, l.rfs = slices.Clone(l.docs[:n]), slices.Clone(l.tfs[:n]), slices.Clone(l.rfs[:n])
			default:
				l.docs, l.tfs, l.rfs = l.docs[:n], l.tfs[:n], l.rfs[:n]
			}
		}
	}
	for _, id := range ix.removed {
		if ix.docs[id].state == removed {
			ix.docs[id] = doc{}
		}
	}
	ix.removed = ix.removed[:0]
	ix.stale = 0
}

func (ix *Index) newTerm(term string) int32 {
	var tid int32
	if n := len(ix.free); n > 0 {
		tid, ix.free = ix.free[n-1], ix.free[:n-1]
		ix.lists[tid] = postings{term: term}
	} else {
		tid = int32(len(ix.lists))
		ix.lists = append(ix.lists, postings{term: term})
	}
	ix.terms[term] = tid
	if ptid, ok := ix.prefixOf(term, true); ok {
		ix.lists[ptid].words++
	}
	return tid
}

// prefixOf returns the id of word term's prefix term, if it has one and
// the index holds it; create makes it when it does not. A prefix term
// has none.
func (ix *Index) prefixOf(term string, create bool) (int32, bool) {
	if isPrefixTerm(term) {
		return 0, false
	}
	var buf [1 + prefixLen]byte
	p, ok := appendPrefix(buf[:0], term)
	if !ok {
		return 0, false
	}
	ptid, ok := ix.terms[string(p)]
	if !ok && create {
		ptid, ok = ix.newTerm(string(p)), true
	}
	return ptid, ok
}

// countPrefixWords sets the words count of every prefix term (see
// postings.words), for an index whose terms were made without newTerm.
func (ix *Index) countPrefixWords() {
	for i := range ix.lists {
		ix.lists[i].words = 0
	}
	for i := range ix.lists {
		if term := ix.lists[i].term; term != "" {
			if ptid, ok := ix.prefixOf(term, false); ok {
				ix.lists[ptid].words++
			}
		}
	}
}

func (ix *Index) freeTerm(tid int32) {
	if ptid, ok := ix.prefixOf(ix.lists[tid].term, false); ok {
		ix.lists[ptid].words--
	}
	delete(ix.terms, ix.lists[tid].term)
	ix.lists[tid] = postings{}
	ix.free = append(ix.free, tid)
	ix.freed++
}

// find returns the position of doc in l, or where it would be inserted.
func (l *postings) find(doc int32) (int, bool) {
	return slices.BinarySearch(l.docs, doc)
}

// insert adds doc, with count tf (rest its packRest), to l, in doc order;
// ids usually arrive in increasing order, which makes this an append.
func (l *postings) insert(doc, tf int32, rest uint8) {
	t := uint8(min(tf, tfOverflow))
	if n := len(l.docs); n == 0 || l.docs[n-1] < doc {
		l.docs, l.tfs, l.rfs = append(l.docs, doc), append(l.tfs, t), append(l.rfs, rest)
		return
	}
	i, _ := l.find(doc)
	l.docs, l.tfs, l.rfs = slices.Insert(l.docs, i, doc), slices.Insert(l.tfs, i, t), slices.Insert(l.rfs, i, rest)
}

// DocTerms calls fn with each distinct term of document id and the number
// of times it occurs, in no particular order: the counts of
// Tokenize(text) for the text indexed under id, without tokenizing it
// again. It does nothing if id is not indexed. fn must not call back into
// the index.
func (ix *Index) DocTerms(id int, fn func(term string, tf int)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live {
		return
	}
	d := &ix.docs[id]
	for it := d.iter(); it.next(); {
		if l := &ix.lists[it.tid]; !isPrefixTerm(l.term) {
			fn(l.term, int(it.tf))
		}
	}
}

// DocWords calls fn with each distinct term of document id, as DocTerms
// does but without the counts, which spares a search of each term's
// postings: for callers that only ask which terms a page holds. Prefix
// terms are left out as in DocTerms. fn must not call back into the index.
func (ix *Index) DocWords(id int, fn func(term string)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live {
		return
	}
	d := &ix.docs[id]
	for it := d.iter(); it.next(); {
		if term := ix.lists[it.tid].term; !isPrefixTerm(term) {
			fn(term)
		}
	}
}

// DocHolds calls fn with the position in terms of each of them that
// document id holds, in the order of the terms' ids (a term given twice
// is reported at both positions). It reads the document's terms once and
// looks up only the given ones: for a caller that asks about a few
// terms, it spares what DocWords costs, a call and a look-up per word of
// a long page. fn must not call back into the index.
func (ix *Index) DocHolds(id int, terms []string, fn func(i int)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live || len(terms) == 0 {
		return
	}
	type want struct{ tid, i int32 }
	var buf [16]want
	ws := buf[:0]
	for i, t := range terms {
		if tid, ok := ix.terms[t]; ok && !isPrefixTerm(t) {
			ws = append(ws, want{tid, int32(i)})
		}
	}
	if len(ws) == 0 {
		return
	}
	slices.SortStableFunc(ws, func(a, b want) int { return int(a.tid - b.tid) })
	d := &ix.docs[id]
	k := 0
	for it := d.iter(); k < len(ws) && it.next(); {
		for k < len(ws) && ws[k].tid < it.tid {
			k++
		}
		for ; k < len(ws) && ws[k].tid == it.tid; k++ {
			fn(int(ws[k].i))
		}
	}
}

// EachHolder calls fn with the position in docs (document ids,
// ascending) of each live document that holds term, a word term; with
// prefix, of each that holds a word whose prefix term is term's (a word
// of at least prefixLen letters a–z sharing its first prefixLen; term
// itself need not be indexed). It reads term's postings where docs fall,
// not the documents' terms: for a caller asking which of a few pages hold
// each of a query's words, it costs a search per page and word rather
// than a look-up per word of each page. fn must not call back into the
// index.
func (ix *Index) EachHolder(term string, prefix bool, docs []int32, fn func(k int)) {
	if len(docs) == 0 {
		return
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var tid int32
	var ok bool
	if prefix {
		var buf [1 + prefixLen]byte
		p, has := appendPrefix(buf[:0], term)
		tid, ok = ix.terms[string(p)]
		ok = ok && has
	} else {
		tid, ok = ix.terms[term]
		ok = ok && !isPrefixTerm(term)
	}
	if !ok {
		return
	}
	held := ix.lists[tid].docs
	if len(held) <= 4*len(docs) {
		// Comparable lengths: one merge of the two lists.
		j := 0
		for k, d := range docs {
			for j < len(held) && held[j] < d {
				j++
			}
			if j == len(held) {
				return
			}
			if held[j] == d && ix.docs[d].state == live {
				fn(k)
			}
		}
		return
	}
	for k, d := range docs {
		j, found := slices.BinarySearch(held, d)
		if found && ix.docs[d].state == live {
			fn(k)
		}
		held = held[j:]
	}
}

// TermMemo holds a value for each word term of one Index, computed by of
// from the term's text the first time a document holding it is read
// (EachDocValue): a caller that asks the same question of the words of
// many documents (which query terms does this word match?) asks it once
// per distinct word, and reads the words of a document as term ids
// rather than as text. The values stay valid while the index frees no
// term (a freed term's id is given to another); after that the memo
// starts again. It is not safe for concurrent use.
type TermMemo[T any] struct {
	of    func(term string) T
	ix    *Index
	freed uint64
	vals  []T
	state []termState
	tids  []int32 // EachDocValue's scratch
}

type termState uint8

const (
	termUnknown termState = iota
	termWord
	termPrefix
)

// Reset empties m and makes it a memo of of's values, keeping its
// storage for the values to come.
func (m *TermMemo[T]) Reset(of func(term string) T) {
	m.of, m.ix = of, nil
}

// NewTermMemo returns an empty memo of of's values.
func NewTermMemo[T any](of func(term string) T) *TermMemo[T] {
	return &TermMemo[T]{of: of}
}

// EachDocValue calls fn with the memo's value of each distinct word term
// of document id (the terms DocWords gives, in the same order). It does
// nothing if id is not indexed. fn must not call back into the index.
func EachDocValue[T any](ix *Index, m *TermMemo[T], id int, fn func(T)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= len(ix.docs) || ix.docs[id].state != live {
		return
	}
	if m.ix != ix || m.freed != ix.freed {
		m.ix, m.freed = ix, ix.freed
		clear(m.state)
	}
	if n := len(ix.lists); len(m.state) < n {
		m.state = append(m.state, make([]termState, n-len(m.state))...)
		m.vals = append(m.vals, make([]T, n-len(m.vals))...)
	}
	m.tids = appendTermIDs(m.tids[:0], ix.docs[id].terms)
	for _, tid := range m.tids {
		switch m.state[tid] {
		case termUnknown:
			term := ix.lists[tid].term
			if isPrefixTerm(term) {
				m.state[tid] = termPrefix
				continue
			}
			m.vals[tid] = m.of(term)
			m.state[tid] = termWord
		case termPrefix:
			continue
		}
		fn(m.vals[tid])
	}
}
