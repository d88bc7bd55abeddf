package recall

import (
	"slices"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// maxMatchMemos bounds the query term lists whose per-word answers are
// kept: one retrieval asks termMatch of a few lists (the query's, its
// floor terms, the keywords', at two shares), so the memos of a
// retrieval outlive it only until the next one asks of others.
const maxMatchMemos = 8

// matchMemos keeps, per query term list and shares, what each word of
// the page index matches (wordMatch), so that reading a page's words
// costs a lookup per word rather than a comparison per word and term: on
// a LongMemEval history (long replies, ~300 distinct words a page) that
// comparison was half of a retrieval's time. It is safe for concurrent
// use: a memo is lent to one reader at a time (take, give), and
// retrievals running in parallel each read their own, so that only the
// lending is under mu.
type matchMemos struct {
	mu    sync.Mutex
	memos []*matchMemo
	// spare are the word memos of memos that were let go, for the memos
	// made next to reuse: a memo holds a value per word of the index,
	// and most retrievals ask of a new query, so making them anew was a
	// fifth of what a retrieval allocates. memos and spare together
	// hold no more than memos did.
	spare []*lexical.TermMemo[int32]
}

// matchMemo is the memo of one query term list: per word, the index in
// vecs (plus one) of how much it matches each term, 0 when it matches
// none.
type matchMemo struct {
	terms               []string
	prefixShare, member float64
	memo                *lexical.TermMemo[int32]
	vecs                [][]float64
	lent                bool // to a reader, under matchMemos.mu
}

// each calls fn with how much each word of page p matches each of qterms
// (wordMatch), skipping the words that match none, as reading
// ix.DocWords and asking wordMatch would.
func (ms *matchMemos) each(ix *lexical.Index, p int, qterms []lexical.Term, prefixShare, memberShare float64, fn func([]float64)) {
	m := ms.take(qterms, prefixShare, memberShare)
	defer ms.give(m)
	lexical.EachDocValue(ix, m.memo, p, func(v int32) {
		if v > 0 {
			fn(m.vecs[v-1])
		}
	})
}

// give returns a memo that take lent.
func (ms *matchMemos) give(m *matchMemo) {
	ms.mu.Lock()
	m.lent = false
	ms.mu.Unlock()
}

// take lends the memo of qterms at the shares, made when none is free.
func (ms *matchMemos) take(qterms []lexical.Term, prefixShare, memberShare float64) *matchMemo {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, m := range ms.memos {
		if !m.lent && m.prefixShare == prefixShare && m.member == memberShare &&
			slices.EqualFunc(m.terms, qterms, func(a string, b lexical.Term) bool { return a == b.Text }) {
			m.lent = true
			return m
		}
	}
	if len(ms.memos) >= maxMatchMemos {
		// The memos in use stay theirs; the others go, their storage
		// kept as spare.
		ms.memos = slices.DeleteFunc(ms.memos, func(m *matchMemo) bool {
			if !m.lent {
				ms.spare = append(ms.spare, m.memo)
			}
			return !m.lent
		})
	}
	m := &matchMemo{prefixShare: prefixShare, member: memberShare, lent: true}
	for _, q := range qterms {
		m.terms = append(m.terms, q.Text)
	}
	of := func(word string) int32 {
		var vec []float64
		for j, q := range m.terms {
			if x := wordMatch(word, q, prefixShare, memberShare); x > 0 {
				if vec == nil {
					vec = make([]float64, len(m.terms))
				}
				vec[j] = x
			}
		}
		if vec == nil {
			return 0
		}
		if i := slices.IndexFunc(m.vecs, func(v []float64) bool { return slices.Equal(v, vec) }); i >= 0 {
			return int32(i + 1)
		}
		m.vecs = append(m.vecs, vec)
		return int32(len(m.vecs))
	}
	if n := len(ms.spare); n > 0 {
		m.memo = ms.spare[n-1]
		ms.spare[n-1] = nil
		ms.spare = ms.spare[:n-1]
		m.memo.Reset(of)
	} else {
		m.memo = lexical.NewTermMemo(of)
	}
	ms.memos = append(ms.memos, m)
	return m
}
