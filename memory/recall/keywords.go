package recall

import (
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Keywords are the host's keywords of one retrieval, each with its
// analysed terms (KeywordTerms' analysis), to tell which of them found a
// page or a fact.
type Keywords struct {
	entries []string
	terms   [][]string
	// flat lists every entry's terms in one list, and of says whose each
	// is: InPage reads a page's terms once for all of them.
	flat []string
	of   []int
}

// NewKeywords analyses the host's keywords; entries with no searchable
// word (all asking words) are left out.
func NewKeywords(keywords []string) Keywords {
	var k Keywords
	for _, kw := range keywords {
		var ts []string
		for _, t := range lexical.Tokenize(kw) {
			if !askingWords()[t] {
				ts = append(ts, t)
			}
		}
		if len(ts) > 0 {
			for range ts {
				k.of = append(k.of, len(k.entries))
			}
			k.flat = append(k.flat, ts...)
			k.entries = append(k.entries, kw)
			k.terms = append(k.terms, ts)
		}
	}
	return k
}

// InPage returns the keywords a word of which page p holds, in the
// order the host gave them; nil when none.
func (k Keywords) InPage(st *Pages, p int) []string {
	if len(k.entries) == 0 {
		return nil
	}
	held := make([]bool, len(k.entries))
	st.Index.DocHolds(p, k.flat, func(i int) { held[k.of[i]] = true })
	var out []string
	for i, h := range held {
		if h {
			out = append(out, k.entries[i])
		}
	}
	return out
}

// InText returns the keywords a word of which text holds, in the order
// the host gave them; nil when none.
func (k Keywords) InText(text string) []string {
	if len(k.entries) == 0 {
		return nil
	}
	words := make(map[string]bool)
	for _, t := range lexical.Tokenize(text) {
		words[t] = true
	}
	return k.held(words)
}

func (k Keywords) held(words map[string]bool) []string {
	var out []string
	for i, ts := range k.terms {
		for _, t := range ts {
			if words[t] {
				out = append(out, k.entries[i])
				break
			}
		}
	}
	return out
}
