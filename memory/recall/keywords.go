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
	// One list of every keyword's terms, and for each the keyword it
	// belongs to: the page's words are read once, and only these looked
	// up (a long reply has hundreds).
	var buf [32]string
	var ofBuf [32]int
	terms, of := buf[:0], ofBuf[:0]
	for i, ts := range k.terms {
		terms = append(terms, ts...)
		for range ts {
			of = append(of, i)
		}
	}
	var heldBuf [16]bool
	held := heldBuf[:0]
	held = append(held, make([]bool, len(k.entries))...)
	st.Index.DocHolds(p, terms, func(i int) { held[of[i]] = true })
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
