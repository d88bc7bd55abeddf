package recall

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// isPhaticBefore is isPhatic as it was before it read its words in
// place: TestIsPhaticSame holds the two to the same answers.
func isPhaticBefore(s string, qterms []lexical.Term) bool {
	words := 0
	first := true
	var bad bool
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		w = strings.ReplaceAll(w, "’", "'")
		r := []rune(w)
		if !first && unicode.IsUpper(r[0]) && w != "I" && w != "I'm" {
			bad = true
		}
		first = false
		if !phaticWords()[strings.ToLower(w)] {
			bad = true
		}
		words++
	}
	if bad || words == 0 {
		return false
	}
	for _, t := range lexical.Tokenize(s) {
		for _, q := range qterms {
			if t == q.Text {
				return false
			}
		}
	}
	return true
}

func TestIsPhaticSame(t *testing.T) {
	texts := []string{
		"", " ", "!!", "Thanks!", "Thanks so much!", "thanks, Bob!", "THANKS A LOT", "I'm glad", "I’m glad to hear it!",
		"’thanks", "thanks’", "Wow, that's awesome!", "Take care, talk soon!", "Yes!", "It was great!",
		"thanKs", "tha\u212Aks", "\u212Aool", "ﬁne", "İ", "nice 2", "nice２", "cool \xff cool", "\xffthanks", "thanks\xff",
		"congratulations", "Congratulations!", "congratulationss", "verylongwordthatisnotphatic",
		"Hello hello", "hello Hello", "hi I", "hi I'M", "hi I’m", "see ya later", "Café nice",
	}
	alphabet := []string{"thanks", "Thanks", "so", "much", "I", "I'm", "I’m", "’", "'", " ", "!", ",", ".", "\n", "2",
		"great", "Great", "café", "\u212A", "k", "K", "\xff", "ok", "you", "it’s", "Bob", "é", "İ", "ǅ", "sounds", "fun"}
	r := rand.New(rand.NewPCG(4, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	queries := [][]lexical.Term{nil, QueryTerms("thanks for the fun"), QueryTerms("great sounds")}
	for _, text := range texts {
		for _, q := range queries {
			if got, want := isPhatic(text, q), isPhaticBefore(text, q); got != want {
				t.Errorf("isPhatic(%q, %v) = %v, want %v", text, q, got, want)
			}
		}
	}
}

func BenchmarkTrimPhatic(b *testing.B) {
	text := "Sure. The train leaves at 9:40 from platform 4, and the ride takes about two hours. " +
		"Have a great trip! Thanks so much, talk soon! Take care."
	q := QueryTerms("when does the train leave")
	b.ReportAllocs()
	for b.Loop() {
		trimPhatic(text, q)
	}
}
