package recall

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestWeighSideBound checks the bound Refine gives weighSide: on random
// histories of a user and an assistant, the first n pages (n being the
// count the bound is taken at) and their scores are those of reading
// every page's side.
func TestWeighSideBound(t *testing.T) {
	words := []string{"bike", "bikes", "lock", "trip", "hotel", "dinner", "sister", "birthday", "gift", "yellow",
		"dress", "book", "reading", "finished", "garden", "tomatoes", "three", "road", "mountain", "commute"}
	say := func(r *rand.Rand, n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return fmt.Sprint(out)
	}
	day := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 9))
		turns := make([]memory.Turn, 60)
		for i := range turns {
			turns[i] = memory.Turn{ID: fmt.Sprint("p", i), Seq: int64(i + 1), ThreadID: fmt.Sprint("s", i/6),
				Time: day.Add(time.Duration(i) * time.Hour), User: "I " + say(r, 3+r.IntN(8)), Reply: say(r, 5+r.IntN(20))}
		}
		st := testPages(turns)
		query := "How many bikes do I own for my commute?"
		qterms, kterms := QueryTerms(query), KeywordTerms([]string{"road bike", "mountain"})
		hits := st.Index.SearchTerms(qterms, 40, nil)
		for _, n := range []int{5, 10, 12} {
			if len(hits) < n {
				continue
			}
			all, bounded := slices.Clone(hits), slices.Clone(hits)
			weighSide(st, query, qterms, kterms, all, 0)
			weighSide(st, query, qterms, kterms, bounded, (1-speakerWeight)*hits[n-1].Score)
			SortHits(all)
			SortHits(bounded)
			if !slices.Equal(all[:n], bounded[:n]) {
				t.Fatalf("seed %d, n %d: bounded %v, want %v", seed, n, bounded[:n], all[:n])
			}
		}
	}
}
