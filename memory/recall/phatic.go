package recall

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// phaticWords are the words of English small talk that carry nothing a
// later answer could use: thanks, praise without an object, greetings,
// sign-offs; the set is built on first use. A sentence made only of them ("Thanks!", "Wow, that's
// awesome!", "Take care, talk soon!") is phatic. Answers are not: yes, no,
// me too, numbers and the past tense ("It was great!" tells how something
// went) are left out of the list on purpose, so "Yes!" or "Me too!" after
// a question is always quoted.
var phaticWords = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`
		thanks thank thx you so much very lot a really too
		same here wow whoa oh ah aw aww yay haha hah lol hehe
		cool nice great awesome amazing wonderful fantastic incredible lovely
		sweet neat super brilliant fab
		that that's thats it it's its sounds sound like fun
		glad happy to hear for i i'm im am is
		take care talk soon catch later see ya bye goodbye cheers
		hey hi hello morning night have good day
		congrats congratulations well done
		and the what an how`) {
		m[w] = true
	}
	return m
})

// isPhatic reports whether sentence s holds only phatic words, and no
// query term (qterms), digit or capitalised word past its first (a name).
func isPhatic(s string, qterms []lexical.Term) bool {
	// The words are read in place, as strings.FieldsFunc would split
	// them: trimPhatic asks this of the last sentences of every quoted
	// reply, so a slice of words per sentence was a tenth of what a
	// retrieval allocates.
	words := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !wordRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !wordRune(r) {
				break
			}
			j += size
		}
		w := strings.ReplaceAll(s[i:j], "’", "'")
		i = j
		if first, _ := utf8.DecodeRuneInString(w); words > 0 && unicode.IsUpper(first) && w != "I" && w != "I'm" {
			return false
		}
		if !phaticWord(w) {
			return false
		}
		words++
	}
	return words > 0 && !lexical.AnyTerm(s, func(t []byte) bool {
		return slices.ContainsFunc(qterms, func(q lexical.Term) bool { return q.Text == string(t) })
	})
}

// wordRune reports whether r belongs to a word of isPhatic's.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’'
}

// phaticWord reports whether w, lowercased, is one of phaticWords. A
// short ASCII word is lowercased on the stack; any other goes through
// strings.ToLower (which may map a non-ASCII letter to an ASCII one).
func phaticWord(w string) bool {
	var buf [16]byte
	if len(w) > len(buf) {
		return phaticWords()[strings.ToLower(w)]
	}
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c >= utf8.RuneSelf {
			return phaticWords()[strings.ToLower(w)]
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[k] = c
	}
	return phaticWords()[string(buf[:len(w)])]
}

// trimPhatic returns text without its closing run of phatic sentences
// (isPhatic), cut whole and marked with an ellipsis, or "" when every
// sentence is phatic. An opening or inner phatic sentence is kept: it
// is often the first words of the answer ("Thanks! I've been writing…"),
// and cutting it would save a token or two.
func trimPhatic(text string, qterms []lexical.Term) string {
	spans := sentenceSpans(text)
	if len(spans) == 0 {
		return text
	}
	cut := len(spans)
	for cut > 0 && isPhatic(text[spans[cut-1][0]:spans[cut-1][1]], qterms) {
		cut--
	}
	switch cut {
	case 0:
		return ""
	case len(spans):
		return text
	}
	return strings.TrimSpace(text[:spans[cut-1][1]]) + " …"
}

// sentenceSpans returns the byte spans of text's sentences, as
// sentences() splits them.
func sentenceSpans(text string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		next := i + size
		end := next == len(text)
		if r == '\n' || end || (sentenceEnd(r) && unicode.IsSpace(firstRune(text[next:]))) {
			if strings.TrimSpace(text[start:next]) != "" {
				out = append(out, [2]int{start, next})
			}
			start = next
		}
		i = next
	}
	return out
}

// sentenceEnd reports whether r is one of the marks that end a sentence
// when a space follows: . ! ? 。 ！ ？ (a test per rune of every long
// reply read: the ASCII ones are compared first).
func sentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？':
		return true
	}
	return false
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
