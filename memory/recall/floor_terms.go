package recall

import (
	"regexp"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// FloorTerms returns the query's terms that the relevance floor (Relevant)
// weighs: those of the query with its date expressions (the ones
// queryWindows reads: "on 7 July, 2023", "in May", "last week", "the
// past two months", "last Saturday", "昨天")
// left out. A page answers a date by when it was said, not by its words, so
// "What did John attend in March 2023?" must not ask a page to hold
// "march" and "2023". A query that is only a date keeps all its terms.
func FloorTerms(query string) []lexical.Term {
	rest := withoutDates(query)
	if rest == strings.ToLower(query) {
		return QueryTerms(query)
	}
	if qt := QueryTerms(rest); len(lexical.Tokenize(rest)) > 0 && len(qt) > 0 {
		return qt
	}
	return QueryTerms(query)
}

// withoutDates returns the lowercased query with its date expressions
// blanked.
func withoutDates(query string) string {
	lower := strings.ToLower(query)
	if !mayNameDate(lower) {
		return lower
	}
	b := []byte(lower)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			b[i] = ' '
		}
	}
	for _, re := range dateExpressions() {
		for _, loc := range re.FindAllStringIndex(lower, -1) {
			blank(loc[0], loc[1])
		}
	}
	for _, w := range zhRelative {
		for i := 0; ; {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			blank(i+j, i+j+len(w))
			i += j + len(w)
		}
	}
	return string(b)
}

// dateExpressions are every expression queryWindows runs, in its order.
func dateExpressions() []*regexp.Regexp {
	return []*regexp.Regexp{reZhYMD(), reZhYear(), reDayMonth(), reMonthDay(), rePartMonth(), reSeason(), reMonthYear(),
		reMonth(), reYear(), reWeekday(), rePast(), reRelative(), reZhMonthDay(), reZhAgo()}
}
