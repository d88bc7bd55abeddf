package lexical

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestAgainstReference applies random adds, replaces and removes, and
// compares every search with a brute-force BM25 over the live documents.
func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Some words share a prefix term ("allergic", "allergies"; "track",
	// "tracker"), most have one of their own.
	words := []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "honeydew", "kiwi", "lemon", "mango", "咖啡", "数据库",
		"allergic", "allergies", "track", "tracker"}
	text := func(long bool) string {
		n := rng.IntN(12)
		s := ""
		for range n {
			s += words[min(rng.IntN(len(words)), rng.IntN(len(words)))] + " "
		}
		if long && rng.IntN(20) == 0 {
			// Counts past what a posting keeps (tfOverflow), for a word
			// and its prefix term.
			s += strings.Repeat(words[rng.IntN(len(words))]+" ", 250+rng.IntN(60))
		}
		return s
	}
	ix := New(Options{})
	ref := map[int][]string{} // id → tokens
	for step := range 3000 {
		id := rng.IntN(200)
		switch op := rng.IntN(10); {
		case op < 6:
			s := text(true)
			ix.Add(id, s)
			ref[id] = indexTerms(s)
		default:
			ix.Remove(id)
			delete(ref, id)
		}
		if step%50 == 0 {
			checkInvariants(t, ix)
		}
		q := text(false)
		got, want := ix.Search(q, 5, nil), referenceSearch(ref, q, 5)
		if len(got) != len(want) {
			t.Fatalf("step %d: Search(%q) = %v, want %v", step, q, got, want)
		}
		for i := range got {
			if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("step %d: Search(%q) = %v, want %v", step, q, got, want)
			}
		}
		if ix.Len() != len(ref) {
			t.Fatalf("step %d: Len() = %d, want %d", step, ix.Len(), len(ref))
		}
	}
}

// referenceSearch scores every document in docs (id → index terms) by BM25
// with the default options: each query word scores the better of its own
// term and prefixWeight times its prefix term.
func referenceSearch(docs map[int][]string, query string, k int) []Hit {
	const k1, b = 1.2, 0.75
	tf := map[int]map[string]int{}
	df := map[string]int{}
	total := 0
	for id, d := range docs {
		tf[id] = map[string]int{}
		for _, tok := range d {
			if tf[id][tok] == 0 {
				df[tok]++
			}
			tf[id][tok]++
			total++
		}
	}
	n := float64(len(docs))
	var hits []Hit
	for id, terms := range tf {
		dl := 0
		for _, c := range terms {
			dl += c
		}
		s := 0.0
		bm25 := func(q string) float64 {
			c := float64(terms[q])
			if c == 0 {
				return 0
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			return idf * c * (k1 + 1) / (c + k1*(1-b+b*float64(dl)/(float64(total)/n)))
		}
		for _, q := range Tokenize(query) {
			sc := bm25(q)
			if p, ok := appendPrefix(nil, q); ok {
				sc = max(sc, prefixWeight*bm25(string(p)))
			}
			s += sc
		}
		if s > 0 {
			hits = append(hits, Hit{id, s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return b.ID - a.ID
	})
	return hits[:min(k, len(hits))]
}

// checkInvariants verifies the index's bookkeeping against its contents.
func checkInvariants(tb testing.TB, ix *Index) {
	tb.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	npost, nlive, total := 0, 0, int64(0)
	hsum := make([]int64, len(ix.docs))  // first-field counts in the postings
	capped := make([]bool, len(ix.docs)) // a second-field count kept at 255
	for tid, l := range ix.lists {
		npost += len(l.docs)
		if len(l.tfs) != len(l.docs) || len(l.rfs) != len(l.docs) {
			tb.Fatalf("term %d has %d documents, %d counts and %d second-field counts", tid, len(l.docs), len(l.tfs), len(l.rfs))
		}
		for j, doc := range l.docs {
			tf := ix.tf(&l, int32(tid), j)
			if int32(l.rfs[j]) > tf {
				tb.Fatalf("term %q doc %d: second-field count %d of %d", l.term, doc, l.rfs[j], tf)
			}
			hsum[doc] += int64(l.hf(j, float64(tf)))
			capped[doc] = capped[doc] || l.rfs[j] == math.MaxUint8
		}
		if l.term == "" {
			if len(l.docs) != 0 || l.df != 0 {
				tb.Fatalf("free term %d has postings %v, df %d", tid, l.docs, l.df)
			}
			continue
		}
		if got, ok := ix.terms[l.term]; !ok || got != int32(tid) {
			tb.Fatalf("term %q: map says %d, %v; want %d", l.term, got, ok, tid)
		}
		df := 0
		for i, doc := range l.docs {
			if i > 0 && l.docs[i-1] >= doc {
				tb.Fatalf("term %q: postings not in ascending doc order: %v", l.term, l.docs)
			}
			if ix.docs[doc].state == live {
				df++
			}
		}
		if df != int(l.df) || len(l.docs) == 0 {
			tb.Fatalf("term %q: df %d, %d postings (%d live); want df = live > 0", l.term, l.df, len(l.docs), df)
		}
	}
	// Each prefix term counts the word terms it is the prefix of.
	words := map[string]int32{}
	for _, l := range ix.lists {
		if p, ok := appendPrefix(nil, l.term); ok && l.term != "" && !isPrefixTerm(l.term) {
			words[string(p)]++
		}
	}
	for _, l := range ix.lists {
		if isPrefixTerm(l.term) && l.words != words[l.term] {
			tb.Fatalf("prefix term %q counts %d words, want %d", l.term, l.words, words[l.term])
		}
	}
	htotal := int64(0)
	for id, d := range ix.docs {
		if d.state == live {
			nlive++
			total += int64(ix.lens[id])
			htotal += int64(ix.heads[id])
			if ix.heads[id] < 0 || ix.heads[id] > ix.lens[id] {
				tb.Fatalf("doc %d has a first field of %d terms in %d", id, ix.heads[id], ix.lens[id])
			}
			if hsum[id] != int64(ix.heads[id]) && !(capped[id] && hsum[id] > int64(ix.heads[id])) {
				tb.Fatalf("doc %d: %d first-field tokens in the postings for a first field of %d in %d", id, hsum[id], ix.heads[id], ix.lens[id])
			}
		} else if ix.lens[id] != 0 || ix.heads[id] != 0 {
			tb.Fatalf("doc %d not live has length %d, first field %d", id, ix.lens[id], ix.heads[id])
		}
	}
	if htotal != ix.htotal {
		tb.Fatalf("first fields total %d, want %d", ix.htotal, htotal)
	}
	if npost != ix.npost || nlive != ix.live || total != ix.total || len(ix.terms)+len(ix.free) != len(ix.lists) {
		tb.Fatalf("counts: postings %d (want %d), live %d (want %d), total %d (want %d), terms %d + free %d != %d lists",
			ix.npost, npost, ix.live, nlive, ix.total, total, len(ix.terms), len(ix.free), len(ix.lists))
	}
}
