package recall

import (
	"math"
	"strings"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// MinTextCoverage is the least share of the query's weight that a fact, a
// knowledge entry or a profile sentence must hold to enter the injection
// text, so that a line about something else that shares one common word
// with the query stays out (the pages' gate, minCoverage, is 0.2: a page
// is also weighed by its score against the best one).
const MinTextCoverage = 0.25

// TermWeights returns the weight of each query term for coverage: its IDF
// in the page index, a term never stored counting as the rarest (an
// unseen CJK bigram half of that, a term whose five-letter prefix is
// stored the prefix's IDF).
func TermWeights(st *Pages, qterms []lexical.Term) []float64 {
	rarest := math.Log1p((float64(st.Index.Len()) + 0.5) / 0.5)
	idf := make([]float64, len(qterms))
	var pre []byte
	for i, t := range qterms {
		switch w := st.Index.IDF(t.Text); {
		case w > 0:
			idf[i] = w
		case isCJKTerm(t.Text):
			// An unseen CJK bigram is often two characters across a
			// word boundary rather than a word: it counts half.
			idf[i] = rarest / 2
		default:
			idf[i] = rarest
			if p, ok := prefixTerm(pre[:0], t.Text); ok {
				pre = p
				if w := st.Index.IDF(string(p)); w > 0 {
					idf[i] = w
				}
			}
		}
	}
	return idf
}

// TextCoverage returns the share of the query's weight (TermWeights) that
// text holds: a query term it holds counts whole, a word of the same
// five-letter prefix half, as in the page index.
func TextCoverage(text string, qterms []lexical.Term, weights []float64) float64 {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return 0
	}
	match := make([]float64, len(qterms))
	for _, t := range lexical.Tokenize(text) {
		for j, q := range qterms {
			switch {
			case t == q.Text:
				match[j] = 1
			case match[j] == 0 && samePrefix(t, q.Text):
				match[j] = 0.5
			}
		}
	}
	cov := 0.0
	for j, m := range match {
		cov += weights[j] * m
	}
	return cov / total
}

// RelevantSentences returns the sentences of a summary that hold at least
// MinTextCoverage of the query's weight or of the keywords' (kterms,
// kweights; none when empty), or that state a standing constraint
// (StandingText), in their order, joined by a space; "" when none does.
func RelevantSentences(summary string, qterms []lexical.Term, weights []float64, kterms []lexical.Term, kweights []float64) string {
	var kept []string
	for _, s := range sentences(summary) {
		if TextCoverage(s, qterms, weights) >= MinTextCoverage || StandingText(s) ||
			(len(kterms) > 0 && TextCoverage(s, kterms, kweights) >= MinTextCoverage) {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, " ")
}

// sentences splits text after each '.', '!', '?' or line break that ends
// a sentence (followed by a space or the end), trimming each.
func sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i, r := range rs {
		end := i == len(rs)-1
		if r == '\n' || (strings.ContainsRune(".!?。！？", r) && (end || unicode.IsSpace(rs[i+1]))) || end {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}
