package recall

import (
	"slices"
	"strings"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// wholePages is how many of the pages shown, best first, are quoted
// whole; each page after them quotes only the sides that are likely to
// hold the answer (quotedSides), so that the tokens go to more pages
// rather than to the other speaker's words. Measured on LoCoMo dev and
// REALTALK through the binary (docs/tools.md, the <memory> text): the speaker a
// question names says 0.95 of LoCoMo's evidence turns (0.86 of
// REALTALK's); with the default pages and floor, quoting every page whole
// costs 653 tokens mean on LoCoMo for 0.818 of the evidence, this 448 for
// 0.801. Two pages whole: 0.806 at 476; none: 0.785 at 421.
const wholePages = 1

// quotedSides says which sides of a page after the first ones to quote:
// when the question names a speaker of the dialogue, the sides that
// speaker said (none, and the page is left out, when the other spoke
// both); when it names none, the sides that hold a query word (its terms,
// their other forms and synonyms, the members of a category it names:
// MatchTerms) and the answer to a matching question (with an assistant,
// what it suggested or said it would do), or both when neither holds
// one: the page was ranked for its neighbours or for words its text does
// not show. replyHolds says whether the reply holds one of those words,
// read with its excerpt (replyBody).
func (q quoter) quotedSides(p memory.PageHit, replyHolds bool) (user, reply bool) {
	us, uw := q.label(p.User, "")
	rs, _ := q.label(p.Reply, "")
	if len(q.named) > 0 {
		return q.named[us], q.named[rs]
	}
	user, reply = q.match.holds(uw), replyHolds
	if !user && !reply {
		return true, true
	}
	// A matched question is quoted with its answer.
	if user && asks(uw) {
		reply = true
	}
	return user, reply
}

// asks reports whether a side ends with a question: its answer follows
// on the other side.
func asks(side string) bool {
	return strings.HasSuffix(strings.TrimRightFunc(side, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`"'”’)`, r)
	}), "?") || strings.HasSuffix(strings.TrimSpace(side), "？")
}

// termSet is the set of words a side is matched on, as the page index
// analyses them (lexical.Tokenize), with their five-letter prefixes for
// the index's prefix match (samePrefix).
type termSet struct {
	terms    map[string]bool
	prefixes map[string]bool
	// starts are how the terms begin: a text's words beginning
	// otherwise are not analysed (lexical.AnyTermStarting).
	starts *lexical.Starts
}

// newTermSet returns the set of terms, less those of the speakers' names
// (a name says who speaks, not what about).
func newTermSet(terms []lexical.Term, names map[string]bool) termSet {
	skip := make(map[string]bool)
	for n := range names {
		for _, t := range lexical.Tokenize(n) {
			skip[t] = true
		}
	}
	s := termSet{terms: make(map[string]bool), prefixes: make(map[string]bool), starts: new(lexical.Starts)}
	for _, t := range terms {
		if skip[t.Text] {
			continue
		}
		s.terms[t.Text] = true
		s.starts.Add(t.Text)
		if samePrefix(t.Text, t.Text) {
			s.prefixes[t.Text[:5]] = true
		}
	}
	return s
}

// holds reports whether text holds one of the set's terms, or a word of
// the same prefix.
func (s termSet) holds(text string) bool {
	if len(s.terms) == 0 {
		return false
	}
	return lexical.AnyTermStarting(text, s.starts, func(t []byte) bool {
		return s.terms[string(t)] || (letterPrefix(t) && s.prefixes[string(t[:5])])
	})
}

// letterPrefix reports whether the analysed term t has a prefix term in
// the page index: it is at least five letters long, every one of them
// a–z (as lexical indexes prefix terms; a word such as "covid19" or
// "fiancé" has none).
func letterPrefix[T string | []byte](t T) bool {
	if len(t) < 5 {
		return false
	}
	for i := range len(t) {
		if t[i] < 'a' || t[i] > 'z' {
			return false
		}
	}
	return true
}

// namedSpeakers returns the speakers' names (names) whose given name
// (SpeakerOf's) is a query term: "What did Caroline research?" names
// Caroline, "What are Fahim's hobbies?" names Fahim Khan.
func namedSpeakers(names map[string]bool, qterms []lexical.Term) map[string]bool {
	out := make(map[string]bool)
	for n := range names {
		given := SpeakerOf(n + ":")
		if given != "" && slices.ContainsFunc(qterms, func(q lexical.Term) bool { return q.Text == given }) {
			out[n] = true
		}
	}
	return out
}

// MatchTerms returns the words a side of a page is matched on
// (quotedSides): the query's terms followed by their other forms,
// synonyms and category members that the page index holds, as the
// ranking searches them.
func MatchTerms(st *Pages, qterms []lexical.Term) []lexical.Term {
	return withVariants(st, slices.Clip(qterms))
}

// echoes reports whether the reply (as quoted: reply) of a page a host
// stored (no "Name:" sides) holds no word of the query or keywords
// (quoter.cut) beyond those its user side holds: an assistant's answer
// that repeats what the user said ("…get back to 30 miles per gallon")
// tells a question about the user nothing the user side does not.
func (q quoter) echoes(p memory.PageHit, reply string) bool {
	if SpeakerOf(p.User) != "" || SpeakerOf(p.Reply) != "" {
		return false
	}
	user := q.cut.heldKeys(p.User)
	for k := range q.cut.heldKeys(reply) {
		if !user[k] {
			return false
		}
	}
	return true
}

// heldKeys returns the set's terms text holds, a word of a term's prefix
// counting as the term's prefix, so that two texts holding the same word
// in two forms hold the same key.
func (s termSet) heldKeys(text string) map[string]bool {
	out := make(map[string]bool)
	if len(s.terms) == 0 {
		return out
	}
	lexical.AnyTermStarting(text, s.starts, func(t []byte) bool {
		if k, ok := s.key(t); ok {
			if k[0] != '~' && letterPrefix(t) {
				k = "~" + string(t[:5])
			}
			out[k] = true
		}
		return false
	})
	return out
}
