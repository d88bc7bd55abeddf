package recall

import (
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// maxPastHits bounds the past facts added to one retrieval.
const maxPastHits = 5

// pastCues are the words and phrases that make a query about the past.
var pastCues = []string{"before", "used to", "previously", "previous", "formerly", "former", "earlier", "in the past",
	"back then", "no longer", "anymore", "originally", "at first", "last year", "ago", "did i", "was i", "were we", "when did", "history of"}

// PastCue reports whether query asks about the past.
func PastCue(query string) bool {
	q := " " + strings.Join(strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}), " ") + " "
	for _, c := range pastCues {
		if strings.Contains(q, " "+c+" ") {
			return true
		}
	}
	return false
}

// PastFacts returns the replaced facts of d that match query, best first,
// at most maxPastHits; none unless the query asks about the past.
func PastFacts(d *memory.Document, query string) []memory.FactHit {
	if len(d.PastFacts) == 0 || !PastCue(query) {
		return nil
	}
	ix := lexical.New(lexical.Options{})
	for i, f := range d.PastFacts {
		ix.Add(i, f.Content)
	}
	var out []memory.FactHit
	for _, h := range ix.Search(query, maxPastHits, nil) {
		out = append(out, memory.FactHit{Fact: d.PastFacts[h.ID], Score: round4(h.Score)})
	}
	return out
}

// pastFactLine renders a replaced fact with its validity interval.
func pastFactLine(f memory.Fact) string {
	day := func(t time.Time) string {
		if t.IsZero() {
			return "?"
		}
		return t.UTC().Format(time.DateOnly)
	}
	return "- [past, true " + day(f.Since()) + " to " + day(f.ValidTo) + "] " + CleanLine(f.Content, maxFactRunes)
}

// pastFactItems are the injection lines of past facts, after the current
// facts of the same section (the first after rank n).
func pastFactItems(past []memory.FactHit, n int) []injItem {
	items := make([]injItem, 0, len(past))
	for i, f := range past {
		items = append(items, injItem{secFacts, n + i, pastFactLine(f.Fact), nil})
	}
	return items
}
