package recall

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// TestSideWordsReadSame holds sideWords.read, which skips the words no
// term can match (mayMatch), to what reading every word gives: the same
// share of each query term and keyword, on generated sides of exact
// words, words of a term's prefix, category members and others.
func TestSideWordsReadSame(t *testing.T) {
	vocab := strings.Fields(`sports tennis football running runner runs marathon country spain france
		painting painter paints pottery camping hiking music band guitar "quoted" Ünïcode café 42 3.14
		a the of and deploy deployment deploying kickboxing exercises yoga dinner vegetarian allergic`)
	queries := [][2]string{
		{"What sports does she play", "tennis football"},
		{"Which countries did they visit", "spain trip"},
		{"painting deployment", "pottery running"},
		{"exercises and hobbies", ""},
	}
	r := rand.New(rand.NewPCG(4, 2))
	for _, q := range queries {
		terms := QueryTerms(q[0])
		kterms := KeywordTerms(strings.Fields(q[1]))
		for _, share := range []float64{0, 0.5} {
			w := &sideWords{terms: terms, kterms: kterms, memberShare: share,
				held: make([]float64, len(terms)), kheld: make([]float64, len(kterms))}
			fillMatchSets(w)
			for range 300 {
				var sb strings.Builder
				for range 1 + r.IntN(30) {
					sb.WriteString(vocab[r.IntN(len(vocab))])
					sb.WriteByte(' ')
				}
				side := sb.String()
				w.reset()
				w.read(side)
				held, kheld := make([]float64, len(terms)), make([]float64, len(kterms))
				lexical.Words(side, func(term, _ string) {
					for j, t := range terms {
						held[j] = max(held[j], wordMatch(term, t.Text, 0.5, share))
					}
					for j, t := range kterms {
						kheld[j] = max(kheld[j], wordMatch(term, t.Text, 0.5, 0))
					}
				})
				if !slices.Equal(held, w.held) || !slices.Equal(kheld, w.kheld) {
					t.Fatalf("%q on %q: read %v %v, every word %v %v", q, side, w.held, w.kheld, held, kheld)
				}
			}
		}
	}
}
