package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// BenchmarkInjectionBuild measures building one injection text (20 facts,
// 7 pages, 10 recent exchanges, 2,000 tokens) from a scope of n stored
// pages: each build takes the next 7, so token counts are cached only as
// they would be in use, where the same page comes back now and then.
func BenchmarkInjectionBuild(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			count := newCounter(b)
			r := rand.New(rand.NewPCG(5, uint64(n)))
			pages := make([]memory.PageHit, n)
			for i := range pages {
				pages[i] = memory.PageHit{ID: fmt.Sprint(i), Time: time.Unix(int64(1.7e9+i*60), 0), User: randText(r, 25), Reply: randText(r, 35)}
			}
			in := InjectionInput{Budget: 2000}
			for i := range 20 {
				in.Facts = append(in.Facts, memory.FactHit{Fact: memory.Fact{ID: fmt.Sprintf("fact_%08x", i), Content: randText(r, 12), Category: memory.Categories[i%len(memory.Categories)], Confidence: 0.8}})
			}
			for range 10 {
				in.Recent = append(in.Recent, memory.RecentTurn{User: randText(r, 10), Reply: randText(r, 20)})
			}
			i := 0
			for b.Loop() {
				in.Pages = pages[i : i+7]
				i = (i + 7) % (n - 7)
				BuildInjection(count, in)
			}
		})
	}
}
