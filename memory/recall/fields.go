package recall

import (
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// sideWeights weighs the user's words and the assistant's in the BM25F
// score of an exchange a host stores (exchangeScores): equally, each side's
// counts normalised by that side's own length against its average.
// Scored as one text, as BM25 scores it, the user's short message is
// divided by the long reply beside it: "My first marathon was yesterday"
// under a reply of 300 words came after "What should I eat before my
// first marathon next month?" under a short one. On the LongMemEval
// development half, with the host's keywords: turn recall_all@10 0.874 →
// 0.884, nDCG@5 0.738 → 0.745, recall_any@5 0.949 → 0.955, the text's
// evidence 0.900 → 0.902 at 675 tokens rather than 678; without them
// nDCG@5 0.688 → 0.691, recall_all@10 0.823 → 0.828, recall_any@10 0.955
// → 0.949 (one question, whose misspelt word leaves the evidence no word
// of the query: it moved from 8th to 10th). Half weight for the
// assistant's words gained more with keywords and lost recall_any@5 and
// @10 without them. LoCoMo and REALTALK, dialogues, are unchanged.
var sideWeights = [2]float64{1, 1}

// exchangeScores scores the exchanges a host stores by BM25F on one
// query's terms, each page once.
type exchangeScores struct {
	fs   *lexical.FieldScorer
	memo map[int][2]float64 // page → its BM25 and BM25F scores
	ids  []int              // the pages to score, in rescore
}

func newExchangeScores(st *Pages, terms []lexical.Term) *exchangeScores {
	return &exchangeScores{fs: st.Index.NewFieldScorer(terms, sideWeights), memo: make(map[int][2]float64, 2*RankPool)}
}

// rescore replaces, for each exchange a host stored among hits (ranked by
// the query's terms, times scale, and maybe other terms), the share of its
// score that the query's terms gave, its BM25 score times scale, by its
// BM25F score times scale; then it sorts hits again. Slices of a dialogue
// between named people keep their scores: each side is one person's turn,
// neither of them the one a question asks about as a host's user is.
func (x *exchangeScores) rescore(st *Pages, hits []lexical.Hit, scale float64) {
	st.updateLinks()
	x.ids = x.ids[:0]
	for _, h := range hits {
		if _, ok := x.memo[h.ID]; !ok && !st.links.dialogue[h.ID] {
			x.ids = append(x.ids, h.ID)
		}
	}
	x.fs.ScoresOf(x.ids, func(id int, whole, split float64) {
		x.memo[id] = [2]float64{whole, split}
	})
	changed := false
	for i, h := range hits {
		if sc, ok := x.memo[h.ID]; ok {
			hits[i].Score = max(h.Score+scale*(sc[1]-sc[0]), 0)
			changed = true
		}
	}
	if changed {
		SortHits(hits)
	}
}
