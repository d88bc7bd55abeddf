package recall

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// TestMatchPagesAgreesWithWords holds matchPages, which reads the
// postings of the query's terms, to its definition: per query term, the
// best wordMatch of the page's words. Generated pages mix exact words,
// words sharing a prefix term (and words such as "covid19" or "fiancé"
// whose first five letters agree but which have no prefix term),
// category members and others; some pages are removed or replaced, and
// some asked about were never indexed.
func TestMatchPagesAgreesWithWords(t *testing.T) {
	vocab := strings.Fields(`sports tennis football running runner runs marathon country spain france
		painting painter paints pottery camping hiking music band guitar "quoted" Ünïcode café 42 3.14
		a the of and deploy deployment deploying kickboxing exercises yoga dinner vegetarian allergic
		allergies covid covid19 fiance fiancé fiancée track tracker trackers ~track`)
	queries := []string{
		"What sports does she play", "Which countries did they visit", "painting deployment",
		"exercises and hobbies", "covid fiance tracking", "allergic to anything", "~track",
	}
	r := rand.New(rand.NewPCG(9, 4))
	ix := lexical.New(lexical.Options{})
	const n = 120
	for p := range n {
		var sb strings.Builder
		for range 1 + r.IntN(40) {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		ix.Add(p, sb.String())
	}
	for range 20 {
		ix.Remove(r.IntN(n))
	}
	ix.Add(3, "tennis and covid19 tracker")
	st := &Pages{Index: ix}
	for _, q := range queries {
		qterms := QueryTerms(q)
		for _, shares := range [][2]float64{{0.5, 0}, {1, 0}, {0.5, 0.5}, {0, 0}} {
			var pages []int32
			for range 1 + r.IntN(60) {
				pages = append(pages, int32(r.IntN(n+10)))
			}
			pm := matchPages(st, pages, qterms, shares[0], shares[1])
			for _, p := range pages {
				want := make([]float64, len(qterms))
				ix.DocWords(int(p), func(word string) {
					for j, q := range qterms {
						want[j] = max(want[j], wordMatch(word, q.Text, shares[0], shares[1]))
					}
				})
				if got := pm.of(p); !slices.Equal(got, want) {
					t.Fatalf("%q at %v, page %d: matchPages %v, its words %v", q, shares, p, got, want)
				}
				if got := termMatch(st, int(p), qterms, shares[0], shares[1]); !slices.Equal(got, want) {
					t.Fatalf("%q at %v, page %d: termMatch %v, its words %v", q, shares, p, got, want)
				}
			}
		}
	}
}

// TestLetterPrefixAgreesWithIndex holds recall's prefix rule to the
// index's: a word has a prefix term (letterPrefix) exactly when the index
// finds it under that prefix.
func TestLetterPrefixAgreesWithIndex(t *testing.T) {
	for i, w := range []string{"track", "tracker", "covid19", "fiancé", "trac", "naïve", "abcde1", "zebra", "é", "12345"} {
		ix := lexical.New(lexical.Options{})
		ix.Add(0, w)
		for _, word := range lexical.Tokenize(w) {
			held := false
			ix.EachHolder(word, true, []int32{0}, func(int) { held = true })
			if held != letterPrefix(word) {
				t.Errorf("%d: %q: index holds it under its prefix %v, letterPrefix %v", i, word, held, letterPrefix(word))
			}
		}
	}
}
