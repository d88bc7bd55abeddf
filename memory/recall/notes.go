package recall

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// MaxTopicTerms bounds the query terms an itemNote's topics record.
const MaxTopicTerms = 64

// TurnNote is what the injection needs to know of the turn at position p: the
// query terms (qterms, at most maxTopicTerms) it holds and its correction
// signal.
func TurnNote(st *Pages, p int, qterms []lexical.Term) ItemNote {
	n := ItemNote{Correction: st.Turns[p].Signals.Correction}
	for j, m := range termMatch(st, p, qterms, 1, 0) {
		if m > 0 {
			n.Topics |= 1 << j
		}
	}
	return n
}

// TextTopics returns the bits of the query terms (qterms, at most
// maxTopicTerms) that text holds, or a word of the same prefix.
func TextTopics(text string, qterms []lexical.Term) uint64 {
	var topics uint64
	for _, t := range lexical.Tokenize(text) {
		for j, q := range qterms {
			if t == q.Text || samePrefix(t, q.Text) {
				topics |= 1 << j
			}
		}
	}
	return topics
}

// maxKnowledgeHits bounds the user and the assistant knowledge entries a
// retrieval returns.
const maxKnowledgeHits = 5

// RelevantKnowledge scores each entry against the query and the host's
// keywords with the page index's BM25 statistics and returns the best of
// those that hold MinTextCoverage of the query's weight or of the
// keywords' (KeywordTerms).
func RelevantKnowledge(st *Pages, query string, keywords []string, list []memory.Fact) []memory.FactHit {
	var hits []memory.FactHit
	qterms := QueryTerms(query)
	weights := TermWeights(st, qterms)
	kterms := KeywordTerms(keywords)
	kweights := TermWeights(st, kterms)
	text := strings.Join(append([]string{query}, keywords...), " ")
	for _, f := range list {
		if TextCoverage(f.Content, qterms, weights) < MinTextCoverage &&
			(len(kterms) == 0 || TextCoverage(f.Content, kterms, kweights) < MinTextCoverage) {
			continue
		}
		if sc := st.Index.Similarity(text, f.Content); sc > 0 {
			hits = append(hits, memory.FactHit{Fact: f, Score: round4(sc)})
		}
	}
	slices.SortStableFunc(hits, func(a, b memory.FactHit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(len(hits), maxKnowledgeHits)]
}

// round4 rounds a score to four decimals for the result (as
// update.Round4; recall keeps its own copy rather than depend on update).
func round4(x float64) float64 {
	return float64(int64(x*10000+0.5)) / 10000
}
