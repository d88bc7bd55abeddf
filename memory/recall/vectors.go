package recall

import (
	"cmp"
	"math"
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// pageVectors holds a scope's page vectors by page position, unit length;
// nil where a page is not embedded yet. The scope's mu guards it.
type pageVectors struct {
	Loaded bool // the stored vectors were read
	Vecs   [][]float32
	Next   int // first page not yet embedded or skipped
	Count  int // non-nil vecs
	// sending is how many pages before next are in the request being
	// made.
	Sending int
}

// Load places stored vectors at the positions of their turns and returns
// those that belong to a stored turn.
func (v *pageVectors) Load(turns []*memory.Turn, stored []memory.PageVector) []memory.PageVector {
	v.Grow(len(turns))
	v.Loaded = true
	if len(stored) == 0 {
		return nil
	}
	byID := make(map[string][]float32, len(stored))
	for _, pv := range stored {
		byID[pv.TurnID] = pv.Vector
	}
	kept := make([]memory.PageVector, 0, len(turns))
	for p, t := range turns {
		vec, ok := byID[t.ID]
		if !ok {
			continue
		}
		kept = append(kept, memory.PageVector{TurnID: t.ID, Vector: vec})
		if u := Unit(vec); u != nil && v.Vecs[p] == nil {
			v.Set(p, u)
		}
	}
	return kept
}

func (v *pageVectors) Grow(n int) {
	if len(v.Vecs) < n {
		v.Vecs = append(v.Vecs, make([][]float32, n-len(v.Vecs))...)
	}
}

func (v *pageVectors) Set(p int, u []float32) {
	if v.Vecs[p] == nil {
		v.Count++
	}
	v.Vecs[p] = u
}

// Unit returns v scaled to length 1, or nil when v is empty, zero or not
// finite.
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil
	}
	inv := 1 / math.Sqrt(n)
	u := make([]float32, len(v))
	for i, x := range v {
		u[i] = float32(float64(x) * inv)
	}
	return u
}

// nearestPages returns up to k embedded pages by cosine similarity to the unit
// vector q, best first.
func nearestPages(st *Pages, q []float32, k int) []lexical.Hit {
	top := make([]lexical.Hit, 0, k+1) // best first
	for p, v := range st.Vec.Vecs {
		if len(v) != len(q) {
			continue
		}
		var dot float32
		for i := range v {
			dot += v[i] * q[i]
		}
		sc := float64(dot)
		if len(top) == k && sc <= top[k-1].Score {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, sc, func(h lexical.Hit, sc float64) int { return cmp.Compare(sc, h.Score) })
		top = slices.Insert(top, i, lexical.Hit{ID: p, Score: sc})
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// Fuse merges the lexical and the vector ranking by a weighted sum of
// normalised scores: a page scores (1-w)·lexical/best lexical plus
// w·(cosine-lowest)/(highest-lowest) over the vector list, w being the
// vector ranking's share; a page missing from a list scores 0 there. The
// lexical share keeps the scale of the lexical scores (the best is 1), so
// that the session evidence computed from them afterwards sees the same
// shape of scores as without vectors. Reciprocal rank fusion, which flattens
// the scores, ranked below words alone at every weight tried (README).
func Fuse(lex, vec []lexical.Hit, w float64) []lexical.Hit {
	score := make(map[int]float64, len(lex)+len(vec))
	if len(lex) > 0 && lex[0].Score > 0 {
		for _, h := range lex {
			score[h.ID] += (1 - w) * h.Score / lex[0].Score
		}
	}
	if len(vec) > 0 {
		hi, lo := vec[0].Score, vec[len(vec)-1].Score
		for _, h := range vec {
			v := 1.0
			if hi > lo {
				v = (h.Score - lo) / (hi - lo)
			}
			score[h.ID] += w * v
		}
	}
	out := make([]lexical.Hit, 0, len(score))
	for id, sc := range score {
		out = append(out, lexical.Hit{ID: id, Score: sc})
	}
	SortHits(out)
	return out
}

// SortHits orders hits best first, newer first on ties. Scores are
// finite (no NaN), so plain comparisons give cmp.Compare's order at a
// third less of the time: a retrieval sorts its candidates several times.
func SortHits(hits []lexical.Hit) {
	slices.SortFunc(hits, func(a, b lexical.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.ID > b.ID:
			return -1
		case a.ID < b.ID:
			return 1
		}
		return 0
	})
}
