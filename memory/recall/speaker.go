package recall

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// speakerWeight is how much a query that names a speaker asks of that
// speaker's own words. Exchanges recorded as "Name: …" hold two speakers,
// and a question about one of them ("What outdoor activities does John
// enjoy?") is answered by what John said, not by what the other speaker
// said to him; the name itself is in nearly every page and weighs nothing
// in BM25. A page's score is multiplied by
// (1 − speakerWeight) + speakerWeight × coverage, coverage being the
// IDF-weighted share of the other query terms in the named speaker's words
// of that page (a prefix match counts half), over the best speakerPool
// pages. First chosen at 0.3 on LoCoMo dev alone (multi-hop R@10 0.510 →
// 0.528); counting the neighbours' words, the share of the page's match,
// or only whether the speaker says any term lost recall. Raised to 0.5 by
// the joint re-fit on LoCoMo dev and REALTALK (eval/README.md, fourth
// session), after the steps added since: REALTALK R@5 +0.008, R@10
// +0.003, multi-hop R@10 +0.010, nDCG@5 +0.011, LoCoMo multi-hop +0.002
// and R@10 −0.003 (won back by windowBoost 8); 0.4 gained less than half
// as much, 0.2 lost on both sets (multi-hop R@10 −0.013 and −0.008).
const speakerWeight = 0.5

// maxSpeakerName bounds the "Name:" prefix read as a speaker.
const maxSpeakerName = 40

// maxNameWords bounds the words of a speaker's name ("Fahim Khan").
const maxNameWords = 3

// SpeakerOf returns the analysed given name of the speaker that begins
// side ("Caroline: …" → "carolin", "Fahim Khan: …" → "fahim"), or "" when
// it does not begin with a name — one to maxNameWords capitalised words
// of letters, '-' or '.' — followed by a colon. A question names a person
// by the given name more often than by the whole name.
func SpeakerOf(side string) string {
	i := strings.IndexByte(side, ':')
	if i <= 0 || i > maxSpeakerName {
		return ""
	}
	words := strings.Split(side[:i], " ")
	if len(words) > maxNameWords {
		return ""
	}
	for _, w := range words {
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			return ""
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && r != '-' && r != '.' {
				return ""
			}
		}
	}
	toks := lexical.Tokenize(words[0])
	if len(toks) != 1 {
		return ""
	}
	return toks[0]
}

// namedSpeaker returns the first query term that names a speaker of the
// best pages (the first ten hits) and the other query terms; "" when the
// query names none.
func namedSpeaker(st *Pages, qterms []lexical.Term, hits []lexical.Hit) (string, []lexical.Term) {
	var names []string
	for _, h := range hits[:min(10, len(hits))] {
		t := st.Turns[h.ID]
		for _, side := range [2]string{t.User, t.Reply} {
			if n := SpeakerOf(side); n != "" && !contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	for i, q := range qterms {
		if contains(names, q.Text) {
			rest := make([]lexical.Term, 0, len(qterms)-1)
			rest = append(rest, qterms[:i]...)
			return q.Text, append(rest, qterms[i+1:]...)
		}
	}
	return "", nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// weighSpeaker multiplies each hit's score by how much of the query the
// speaker it names says in that page (see speakerWeight; a member of a
// category term counting memberShare, see listMemberShare) and reports
// whether it changed any. When memberShare is not 0 (a list question), a
// name the speaker says (hasName) holds every term of a category whose
// members are names (nameCategories): "What books has Tim read?" is
// answered where Tim names a title.
func weighSpeaker(st *Pages, qterms, kterms []lexical.Term, hits []lexical.Hit, memberShare float64) bool {
	if len(qterms) < 2 || len(hits) == 0 {
		return false
	}
	named, rest := namedSpeaker(st, qterms, hits)
	if named == "" || len(rest) == 0 {
		return false
	}
	w := newSideWords(st, rest, kterms, memberShare)
	if w.total == 0 {
		return false
	}
	// For a list question, the terms of rest that name a category whose
	// members are names (see nameCategories).
	var byName []int
	if memberShare > 0 {
		for j, q := range rest {
			if nameCategories()[q.Text] {
				byName = append(byName, j)
			}
		}
	}
	for i, h := range hits {
		w.reset()
		t := st.Turns[h.ID]
		for _, side := range [2]string{t.User, t.Reply} {
			if SpeakerOf(side) != named {
				continue
			}
			if len(byName) > 0 && hasName(side, SpeakerOf(t.User), SpeakerOf(t.Reply)) {
				for _, j := range byName {
					w.held[j] = 1
				}
			}
			w.read(side)
		}
		hits[i].Score *= (1 - speakerWeight) + speakerWeight*w.cover()
	}
	return true
}

// sideWords is how much of the query's terms (and of the host's
// keywords) the words of one speaker's sides hold, for weighSpeaker and
// weighSide.
type sideWords struct {
	terms, kterms []lexical.Term
	idf, kidf     []float64
	total, ktotal float64
	held, kheld   []float64
	memberShare   float64
	// words, prefixes and members are what a word must be, begin with
	// or belong to for any term to match it (wordMatch): a word in none
	// of them matches no term, and a long reply's words are mostly such.
	words, prefixes map[string]bool
	members         []map[string]bool
	// starts are how those words begin: the words of a side beginning
	// otherwise are not analysed (lexical.AnyTermStarting).
	starts lexical.Starts
}

func newSideWords(st *Pages, terms, kterms []lexical.Term, memberShare float64) *sideWords {
	w := &sideWords{terms: terms, kterms: kterms, memberShare: memberShare,
		held: make([]float64, len(terms)), kheld: make([]float64, len(kterms))}
	w.idf, w.total = termIDF(st, terms)
	w.kidf, w.ktotal = termIDF(st, kterms)
	fillMatchSets(w)
	return w
}

// fillMatchSets fills in what mayMatch reads from w's terms.
func fillMatchSets(w *sideWords) {
	w.words, w.prefixes = make(map[string]bool), make(map[string]bool)
	for _, ts := range [2][]lexical.Term{w.terms, w.kterms} {
		for _, q := range ts {
			w.words[q.Text] = true
			w.starts.Add(q.Text)
			if samePrefix(q.Text, q.Text) {
				w.prefixes[q.Text[:5]] = true
			}
		}
	}
	if w.memberShare > 0 {
		for _, q := range w.terms {
			if m := memberSets()[q.Text]; m != nil {
				w.members = append(w.members, m)
				for member := range m {
					w.starts.Add(member)
				}
			}
		}
	}
}

// mayMatch reports whether some term of w could match the analysed word
// t (wordMatch above 0): t is a term, shares a term's prefix or names a
// member of a category term.
func (w *sideWords) mayMatch(t []byte) bool {
	if w.words[string(t)] || (letterPrefix(t) && w.prefixes[string(t[:5])]) {
		return true
	}
	for _, m := range w.members {
		if m[string(t)] {
			return true
		}
	}
	return false
}

// reset forgets the words read, for the next page.
func (w *sideWords) reset() {
	clear(w.held)
	clear(w.kheld)
}

// read counts the words of one side (a prefix match half, a member of a
// category term memberShare; keywords by word and prefix).
func (w *sideWords) read(side string) {
	lexical.AnyTermStarting(side, &w.starts, func(t []byte) bool {
		if !w.mayMatch(t) {
			return false
		}
		term := string(t)
		for j, q := range w.terms {
			w.held[j] = max(w.held[j], wordMatch(term, q.Text, 0.5, w.memberShare))
		}
		for j, q := range w.kterms {
			w.kheld[j] = max(w.kheld[j], wordMatch(term, q.Text, 0.5, 0))
		}
		return false
	})
}

// cover is the IDF-weighted share of the terms the sides read hold, or of
// the keywords, the better.
func (w *sideWords) cover() float64 {
	cov := 0.0
	for j := range w.terms {
		cov += w.idf[j] * w.held[j]
	}
	cov /= w.total
	if w.ktotal > 0 {
		kc := 0.0
		for j := range w.kterms {
			kc += w.kidf[j] * w.kheld[j]
		}
		cov = max(cov, kc/w.ktotal)
	}
	return cov
}

// nameCategories are the analysed category nouns whose members are mostly
// names: places, titles, teams, bands. Measured on LoCoMo dev and REALTALK
// with listFeedbackTerms (eval/README.md, third session): multi-hop R@10
// +0.005 and +0.005, R@10 +0.001 and +0.002; alone, +0.001 on each.
var nameCategories = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool)
	for _, t := range lexical.Tokenize(`country city place book novel movie film show series band artist singer
		song album restaurant team destination author brand`) {
		m[t] = true
	}
	return m
})

// hasName reports whether side ("Name: text") holds a name: a capitalised
// word that does not begin a sentence and is not "I" or one of speakers
// (analysed names).
func hasName(side string, speakers ...string) bool {
	if i := strings.IndexByte(side, ':'); i > 0 && i <= maxSpeakerName {
		side = side[i+1:]
	}
	start := true
	for _, w := range strings.Fields(side) {
		first := start
		start = strings.ContainsAny(w[len(w)-1:], ".!?")
		if first {
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(w[n:]); r == 'I' && !unicode.IsLetter(next) {
			continue // "I", "I'm", "I’ve"
		}
		if toks := lexical.Tokenize(w); len(toks) > 0 && !contains(speakers, toks[0]) {
			return true
		}
	}
	return false
}

// The side of a host's exchange a query asks about (askedSide).
const (
	sideNone = iota
	sideUser
	sideAssistant
)

// askedSide says which side of an exchange a host stores answers the
// query: the assistant's when the query asks what the assistant said or
// made ("which game did you say…", "the script you wrote"), else the
// user's when it speaks of the user in the first person ("What did I
// buy?", "Can you suggest a hotel for my trip?"), else neither.
func askedSide(query string) int {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	})
	first := false
	for i, w := range words {
		w = strings.ReplaceAll(w, "’", "'")
		switch w {
		case "you":
			// "you said", "you once told", "did you say"; not a
			// request ("can you suggest").
			did := i > 0 && (words[i-1] == "did" || words[i-1] == "have" || words[i-1] == "had")
			for _, n := range words[i+1 : min(len(words), i+3)] {
				if v, ok := assistantVerbs()[n]; ok && (v || did) {
					return sideAssistant
				}
			}
		case "i", "my", "me", "mine", "myself", "i'm", "i've", "i'd", "i'll":
			first = true
		}
	}
	if first {
		return sideUser
	}
	return sideNone
}

// AsksUser reports whether query asks about what the user said or did
// (askedSide: the user's side), as "What did I buy?" does.
func AsksUser(query string) bool {
	return askedSide(query) == sideUser
}

// assistantVerbs are the verbs of what an assistant said or made, as a
// query asks about them after "you": true for a past form ("you said"),
// false for a base form, which counts after "did", "have" or "had" ("did
// you say").
var assistantVerbs = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`said told wrote written recommended suggested mentioned gave given listed
		provided shared described explained named made created came offered proposed advised called`) {
		m[w] = true
	}
	for _, w := range strings.Fields(`say tell write recommend suggest mention give list provide share
		describe explain name make create come offer propose advise call`) {
		m[w] = false
	}
	return m
})

// weighSide is the named speaker's step (weighSpeaker) for an exchange a
// host stores, the user's message and the assistant's reply: when the
// query asks about one side (askedSide), each such page's score is
// multiplied by (1 − speakerWeight) + speakerWeight × the share of the
// query (or of the host's keywords, the better) that side holds. "How
// many bikes do I own?" is answered where the user says "I've got three
// bikes", not where the assistant's advice on bike locks repeats the
// word; "which game did you say…" where the assistant said it. Slices of
// a dialogue between named people are left to weighSpeaker. It reports
// whether it changed any score.
func weighSide(st *Pages, query string, qterms, kterms []lexical.Term, hits []lexical.Hit, bound float64) bool {
	side := askedSide(query)
	if len(qterms) == 0 || side == sideNone {
		return false
	}
	w := newSideWords(st, qterms, kterms, 0)
	if w.total == 0 {
		return false
	}
	st.updateLinks()
	changed := false
	for i, h := range hits {
		t := st.Turns[h.ID]
		if st.links.dialogue[h.ID] {
			continue
		}
		asked := t.User
		if side == sideAssistant {
			asked = t.Reply
		}
		if h.Score < bound || asked == "" {
			// Below bound the page stays below every page kept (see
			// Refine): it takes the least weight without a read. A page
			// without the side asked about (an assistant's message
			// stored alone, for a question about the user) holds none
			// of the query there: the least weight too. A page of that
			// side alone is weighed by it, as an exchange is.
			hits[i].Score *= 1 - speakerWeight
			changed = true
			continue
		}
		w.reset()
		w.read(asked)
		hits[i].Score *= (1 - speakerWeight) + speakerWeight*w.cover()
		changed = true
	}
	return changed
}
