package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// BenchmarkRankListQuestions measures ranking and refining 5,000 pages of
// two named speakers for questions that name one of them and ask for
// several items ("What books has Ann …?"): the path that takes more
// feedback terms and reads the speaker's names.
func BenchmarkRankListQuestions(b *testing.B) {
	const n = 5000
	now := time.Unix(1.8e9, 0)
	r := rand.New(rand.NewPCG(11, n))
	turns := make([]memory.Turn, n)
	for i := range turns {
		turns[i] = memory.Turn{ID: fmt.Sprint(i), Seq: int64(i + 1), ThreadID: "t",
			Time: time.Unix(int64(1.7e9+i*600), 0), User: "Ann: " + randText(r, 25) + " Went to Lisbon.",
			Reply: "Ben: " + randText(r, 35)}
	}
	p := testPages(turns)
	nouns := []string{"books", "cities", "projects", "bands", "tests", "movies"}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = fmt.Sprintf("What %s has Ann %s?", nouns[i%len(nouns)], randText(r, 3))
	}
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		Refine(p, q, nil, now, RankPages(p, q, nil, nil, 0, 50), 10)
	}
}
