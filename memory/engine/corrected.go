package engine

import (
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// correctedByQuery reports whether f is a corrected fact whose replaced
// wording holds recall.MinTextCoverage of the query's weight: asked about
// what it used to say ("Am I vegetarian?" after the correction to
// pescatarian), the correction answers.
func correctedByQuery(f memory.Fact, qterms []lexical.Term, weights []float64) bool {
	return f.Corrected() && f.Replaced != "" && recall.TextCoverage(f.Replaced, qterms, weights) >= recall.MinTextCoverage
}

// markSuperseded marks each shown page and recent exchange that a
// corrected fact supersedes (recall.Supersedes: said before the correction,
// it still holds words of the replaced wording), and adds that fact to
// facts when the ranking left it out, so that the model never reads only
// the outdated exchange. It returns facts.
func markSuperseded(doc *memory.Document, facts []memory.FactHit, pages []memory.PageHit, pageNotes []recall.ItemNote,
	recent []memory.RecentTurn, recentNotes []recall.ItemNote) []memory.FactHit {
	for _, f := range doc.Facts {
		old := recall.ReplacedTerms(f)
		if len(old) == 0 {
			continue
		}
		used := false
		for i, p := range pages {
			if !pageNotes[i].Hidden && recall.Supersedes(f, old, p.Time, p.User+"\n"+p.Reply) {
				pageNotes[i].Superseded, used = true, true
			}
		}
		for i, r := range recent {
			if recall.Supersedes(f, old, r.Time, r.User+"\n"+r.Reply) {
				recentNotes[i].Superseded, used = true, true
			}
		}
		if used && !slices.ContainsFunc(facts, func(h memory.FactHit) bool { return h.ID == f.ID }) {
			facts = append(facts, memory.FactHit{Fact: f, Standing: recall.Standing(f)})
		}
	}
	return facts
}
