package recall

import (
	"math"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// listDecay lowers a page's score by this factor for each better page of
// its sitting already ranked, when the question asks for several items
// (asksForList): the evidence of a list is spread over sittings, and a
// sitting's neighbours should not fill the list.
const listDecay = 0.8

// asksForList reports whether query asks for several items: "how many",
// or an asking word (what, which, where) followed within three words by a
// plural noun ("What foods does …", "In what countries …", "Which
// activities …") or by "has"/"have" … ("Where has Emi travelled?").
func asksForList(query string) bool {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '\'')
	})
	if asksForOrder(words) {
		return true
	}
	for i, w := range words {
		switch strings.ToLower(w) {
		case "how":
			if i+1 < len(words) && strings.EqualFold(words[i+1], "many") {
				return true
			}
		case "what", "which", "where":
			where := strings.EqualFold(w, "where")
			for _, next := range words[i+1 : min(i+4, len(words))] {
				if !where && pluralNoun(next) || where && (next == "has" || next == "have") {
					return true
				}
			}
			return false
		}
	}
	return false
}

// asksForOrder reports whether words ask for the order of several things:
// "in what order" (or sequence), or "order" followed within four words by
// a plural noun ("What is the order of the concerts I went to?"); each
// thing was told where it happened, so the question asks for a list.
func asksForOrder(words []string) bool {
	for i, w := range words {
		if w = strings.ToLower(w); w != "order" && w != "sequence" {
			continue
		}
		if i > 0 && (strings.EqualFold(words[i-1], "what") || strings.EqualFold(words[i-1], "which")) {
			return true
		}
		for _, next := range words[i+1 : min(i+5, len(words))] {
			if pluralNoun(next) {
				return true
			}
		}
	}
	return false
}

// AsksForList reports whether query asks for several items (asksForList):
// the engine tells Relevant so.
func AsksForList(query string) bool { return asksForList(query) }

// notPlural are words ending in s that are not plural nouns.
var notPlural = map[string]bool{"is": true, "was": true, "has": true, "does": true, "this": true, "his": true,
	"its": true, "us": true, "yes": true, "always": true, "sometimes": true, "plus": true, "bus": true, "gas": true,
	"series": true, "news": true, "class": true, "less": true, "across": true, "whereas": true, "thus": true}

// pluralNoun reports whether w looks like a plural noun: a lowercase word
// (a capitalised one is taken for a name) ending in a single s.
func pluralNoun(w string) bool {
	return len(w) > 3 && strings.ToLower(w) == w && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "'s") && !strings.HasSuffix(w, "us") && !notPlural[w]
}

// spreadSittings multiplies each hit's score by listDecay per better hit
// of the same sitting above it, then sorts again. The first hit keeps its
// place: nothing above it shares its sitting.
func spreadSittings(st *Pages, hits []lexical.Hit) {
	st.updateLinks()
	seen := make(map[int32]int, len(hits))
	for i, h := range hits {
		p := st.links.sitting[h.ID]
		hits[i].Score *= math.Pow(listDecay, float64(seen[p]))
		seen[p]++
	}
	SortHits(hits)
}
