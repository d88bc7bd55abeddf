package engine

import (
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
)

// refreshExtractive sets the session's keywords to its most distinctive
// terms (count × IDF over all pages), each shown as the word it most
// often comes from in the recent pages ("goroutines", not the index term
// "goroutin"), and its summary to the opening of the recent page that
// covers most of them.
func (s *Service) refreshExtractive(st *scopeState, ses *memory.MidTermSession) {
	ses.DirtyKW = 0
	terms := tiers.TopTerms(ses.Terms, st.Index, tiers.MidTermKeywords)
	wanted := make(map[string]map[string]int, len(terms))
	for _, t := range terms {
		wanted[t] = nil
	}
	from := max(0, len(ses.Pages)-tiers.MidTermSummaryWindow)
	bestText, bestCover := "", -1
	for _, pg := range ses.Pages[from:] {
		t := st.Turns[pg.Pos]
		text := t.User
		if text == "" {
			text = t.Reply
		}
		cover := 0
		seen := make(map[string]bool, len(terms))
		lexical.Words(text, func(term, word string) {
			if tiers.CountWord(wanted, term, word) && !seen[term] {
				seen[term] = true
				cover++
			}
		})
		if cover > bestCover {
			bestText, bestCover = text, cover
		}
		if text != t.Reply {
			lexical.Words(t.Reply, func(term, word string) { tiers.CountWord(wanted, term, word) })
		}
	}
	kw := make([]string, len(terms))
	for i, t := range terms {
		kw[i] = t
		best := 0
		for w, n := range wanted[t] {
			if n > best || n == best && w < kw[i] {
				kw[i], best = w, n
			}
		}
	}
	ses.SetKeywords(kw)
	ses.Summary = tiers.ClipRunes(tiers.FirstSentence(bestText), tiers.MidTermSummaryRunes)
}
