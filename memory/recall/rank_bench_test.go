package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// testPages builds Pages over turns the way the engine does as turns
// arrive: positions in order, threads, and the page index.
func testPages(turns []memory.Turn) *Pages {
	p := &Pages{Index: lexical.New(lexical.Options{}), Threads: make(map[string][]int)}
	ids := make([]int, 0, len(turns))
	texts := make([]string, 0, len(turns))
	for i := range turns {
		t := &turns[i]
		pos := len(p.Turns)
		p.Turns = append(p.Turns, t)
		p.Threads[t.ThreadID] = append(p.Threads[t.ThreadID], pos)
		ids, texts = append(ids, pos), append(texts, t.Text())
	}
	p.Index.AddBatch(ids, texts)
	return p
}

// BenchmarkRankPages measures ranking and refining the pages of a scope
// of n stored pages for one query, without a Service.
func BenchmarkRankPages(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	now := time.Unix(1.8e9, 0)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(7, uint64(n)))
			turns := make([]memory.Turn, n)
			for i := range turns {
				turns[i] = memory.Turn{ID: fmt.Sprint(i), Seq: int64(i + 1), ThreadID: fmt.Sprint("t", i/50),
					Time: time.Unix(int64(1.7e9+i*60), 0), User: randText(r, 25), Reply: randText(r, 35)}
			}
			p := testPages(turns)
			queries := make([]string, 64)
			for i := range queries {
				queries[i] = randText(r, 6)
			}
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				Refine(p, q, nil, now, RankPages(p, q, nil, nil, 0, 50), 10)
			}
		})
	}
}
