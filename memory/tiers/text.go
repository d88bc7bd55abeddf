package tiers

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// CountWord counts word as a form of term when term is wanted; it
// reports whether it was.
func CountWord(wanted map[string]map[string]int, term, word string) bool {
	words, ok := wanted[term]
	if !ok {
		return false
	}
	if words == nil {
		words = make(map[string]int)
		wanted[term] = words
	}
	words[word]++
	return true
}

// TopTerms returns the n terms with the highest count × IDF, ties broken
// alphabetically so the result is deterministic.
func TopTerms(tf map[string]int, ix *lexical.Index, n int) []string {
	type tw struct {
		term string
		w    float64
	}
	all := make([]tw, 0, len(tf))
	for term, c := range tf {
		idf := ix.IDF(term)
		if idf == 0 {
			idf = 1
		}
		all = append(all, tw{term, float64(c) * idf})
	}
	slices.SortFunc(all, func(a, b tw) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return strings.Compare(a.term, b.term)
	})
	out := make([]string, 0, min(n, len(all)))
	for _, x := range all[:min(n, len(all))] {
		out = append(out, x.term)
	}
	return out
}

// PageTerms is a page's term counts made ready to be compared with many
// sessions: a list, and its squared norm, made once.
type PageTerms struct {
	terms  []string
	counts []int
	sq     float64
}

// NewPageTerms returns tf ready for Cosine.
func NewPageTerms(tf map[string]int) PageTerms {
	p := PageTerms{terms: make([]string, 0, len(tf)), counts: make([]int, 0, len(tf))}
	for t, x := range tf {
		p.terms, p.counts = append(p.terms, t), append(p.counts, x)
		p.sq += float64(x * x)
	}
	return p
}

// Cosine is the cosine of the page's term counts and the session's (the
// sums are of whole numbers, so they do not depend on the order of the
// terms).
func (p PageTerms) Cosine(ses *memory.MidTermSession) float64 {
	if len(p.terms) == 0 || ses.TermsSq == 0 {
		return 0
	}
	var dot float64
	for i, t := range p.terms {
		if c := ses.Terms[t]; c != 0 {
			dot += float64(p.counts[i] * c)
		}
	}
	return dot / math.Sqrt(p.sq*ses.TermsSq)
}

func VecCosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func Jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// FirstSentence returns s up to the end of its first sentence.
func FirstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i, r := range s {
		if (r == '.' || r == '?' || r == '!' || r == '。' || r == '？' || r == '！') && i > 20 {
			return s[:i+utf8.RuneLen(r)]
		}
	}
	return s
}

func ClipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
