package recall

import (
	"strings"
	"sync"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Standing facts are the ones that bear on every answer whatever is asked:
// an assistant that plans a dinner must know of the peanut allergy even
// when the question says only "dinner". They enter every retrieval, at
// most MaxStandingFacts of them, before the facts found by the query.
//
// A fact is standing when the person or the host pinned it
// (memory.Fact.Pinned), when it is a correction (what not to say again) or
// a behaviour rule (how the user wants to be answered), or when its own
// words state a standing constraint: a diet, an allergy or intolerance, a
// health condition or medication, an accessibility need (standingStems).
// The last is read from the fact's text, not from its overlap with the
// question, so it holds when the question shares no word with it.
const MaxStandingFacts = 6

// standingStems are the lowercased beginnings of words that name a
// standing constraint. Written for this project: diets, allergies and
// intolerances, conditions that change what to suggest, accessibility.
var standingStems = sync.OnceValue(func() []string {
	return strings.Fields(`allerg anaphyla vegetarian vegan pescatarian kosher halal
		gluten coeliac celiac lactose intoleran nut-free dairy-free teetotal
		diabet insulin epilep asthma pregnan medication
		wheelchair dyslex deaf colorblind colourblind hearing-impaired
		sobriety`)
})

// StandingText reports whether text states a standing constraint (see
// standingStems): a word of it begins with one of the stems.
func StandingText(text string) bool {
	stems := standingStems()
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '-'
	}) {
		for _, s := range stems {
			if strings.HasPrefix(w, s) {
				return true
			}
		}
	}
	return false
}

// Standing reports whether f is a standing fact (see MaxStandingFacts).
func Standing(f memory.Fact) bool {
	return f.Pinned || f.Category == memory.CategoryCorrection || f.Category == memory.CategoryBehavior || StandingText(f.Content)
}
