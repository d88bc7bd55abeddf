package lexical

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// startTerms returns the terms AnyTermStarting gives for text and s,
// and the terms of AnyTerm that s lets through: the two must agree.
func startTerms(text string, s *Starts) (got, want []string) {
	AnyTermStarting(text, s, func(term []byte) bool {
		got = append(got, string(term))
		return false
	})
	AnyTerm(text, func(term []byte) bool {
		if s.may(term) {
			want = append(want, string(term))
		}
		return false
	})
	return got, want
}

// TestStemKeepsStart checks what Starts rests on over the Snowball
// vocabulary: a word's term begins as the word does (see Starts), so
// that a word beginning as no term asked for gives none.
func TestStemKeepsStart(t *testing.T) {
	n := 0
	eachVocabularyWord(t, func(word, _ string) {
		for _, tok := range Tokenize(word) {
			n++
			var s Starts
			s.Add(tok)
			if !s.may([]byte(word)) {
				t.Errorf("%q gives the term %q, which a Starts of it does not let the word through for", word, tok)
			}
		}
	})
	if n < 10000 {
		t.Fatalf("read %d terms from the vocabulary; want the whole of it", n)
	}
}

// TestAnyTermStarting holds AnyTermStarting to AnyTerm: on generated
// texts (English words, their inflections, digits, accents, ligatures,
// CJK, "C++") and sets of beginnings, it gives exactly AnyTerm's terms
// that begin as one of the set's, in order.
func TestAnyTermStarting(t *testing.T) {
	vocab := strings.Fields(`running runs ran runner tries tried trying skies skis dying lying news
		business always happily happiness generously generation ies ied yes yelled eyed agreed
		the a I C++ C# f# 3.14 42nd covid19 Ünïcödé ＦＵＬＬ ﬁsh café naïve İstanbul 我用Go写 东京
		don't John's o'clock x y ab abs bus gas ass aed xies`)
	r := rand.New(rand.NewPCG(2, 7))
	for range 2000 {
		var sb strings.Builder
		for range 1 + r.IntN(25) {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteString([]string{" ", ", ", ". ", "\n", "-"}[r.IntN(5)])
		}
		text := sb.String()
		var s Starts
		terms := Tokenize(text)
		for range r.IntN(6) {
			if len(terms) > 0 {
				s.Add(terms[r.IntN(len(terms))])
			}
		}
		s.Add(Tokenize(vocab[r.IntN(len(vocab))] + " x")[0])
		got, want := startTerms(text, &s)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: AnyTermStarting %q, AnyTerm's terms of the set %q", text, got, want)
		}
	}
	var none Starts
	if got, _ := startTerms("running with scissors", &none); len(got) != 0 {
		t.Errorf("an empty set lets %q through", got)
	}
}

func FuzzAnyTermStarting(f *testing.F) {
	for _, s := range []string{"", "running late", "C++ and c# f#", "Ünïcödé ﬁsh 东京", "skies dying"} {
		f.Add(s, "ru")
	}
	f.Fuzz(func(t *testing.T, text, begin string) {
		var s Starts
		s.Add(begin)
		for i, term := range Tokenize(text) {
			if i%3 == 0 {
				s.Add(term)
			}
		}
		got, want := startTerms(text, &s)
		if !slices.Equal(got, want) {
			t.Fatalf("%q with %q: AnyTermStarting %q, AnyTerm's terms of the set %q", text, begin, got, want)
		}
	})
}
