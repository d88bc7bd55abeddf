package lexical

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// sameIndex fails unless a and b hold the same terms, postings and
// documents under the same ids.
func sameIndex(tb testing.TB, a, b *Index) {
	tb.Helper()
	checkInvariants(tb, a)
	checkInvariants(tb, b)
	type state struct {
		Terms       map[string]int32
		Lists       []postings
		Free        []int32
		Docs        []doc
		Lens, Heads []int32
		Live, Npost int
		Stale       int
		Total, HTot int64
		Removed     []int32
		Freed       uint64
	}
	get := func(ix *Index) state {
		return state{ix.terms, ix.lists, ix.free, ix.docs, ix.lens, ix.heads, ix.live, ix.npost, ix.stale, ix.total, ix.htotal, ix.removed, ix.freed}
	}
	if sa, sb := get(a), get(b); !reflect.DeepEqual(sa, sb) {
		tb.Fatalf("indexes differ:\n%+v\n%+v", sa, sb)
	}
}

func TestAddBatch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	corpus := benchCorpus(300)
	seq := func(n int) []int {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		return ids
	}
	tests := []struct {
		name  string
		setup []string // documents indexed first under ids 0, 1, …
		ids   []int
		texts []string
	}{
		{"empty", nil, nil, nil},
		{"one", nil, []int{0}, corpus[:1]},
		{"dense", nil, seq(len(corpus)), corpus},
		{"after others", corpus[:50], []int{50, 51, 52, 53, 54, 55, 56, 57}, corpus[100:108]},
		{"out of order", nil, []int{9, 3, 7, 0, 1, 2, 8, 4, 5, 6}, corpus[:10]},
		{"gaps", nil, []int{100, 5, 1000, 6}, corpus[:4]},
		{"replaces", []string{"alpha beta", "gamma delta", "epsilon"}, []int{0, 1, 2, 3, 4}, []string{"gamma zeta", "alpha", "eta theta", "delta delta", "epsilon beta"}},
		{"same id twice", []string{"alpha"}, []int{1, 0, 1, 1, 2, 0}, []string{"beta gamma", "delta", "beta", "gamma omega", "omega beta", "alpha beta"}},
		{"cjk and stop words", nil, []int{0, 1, 2, 3}, []string{"数据库 migration", "the and of", "", "café Café CAFE C++ c#"}},
	}
	for _, tt := range tests {
		for _, round := range []int{1, 2, 3, 7, batchRound} {
			t.Run(fmt.Sprintf("%s/round=%d", tt.name, round), func(t *testing.T) {
				want, got := mustIndex(t, tt.setup...), mustIndex(t, tt.setup...)
				for i, id := range tt.ids {
					want.Add(id, tt.texts[i])
				}
				got.addBatch(tt.ids, tt.texts, nil, round)
				sameIndex(t, got, want)
			})
		}
	}
}

// TestAddBatchRemoveBetween checks that a term freed by a Remove between
// AddBatch's rounds is not reused from its cache.
func TestAddBatchRemoveBetween(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for range 20 {
		got := mustIndex(t, "solo", "other")
		texts := []string{"solo x", "a", "b", "c", "d", "solo y", "e", "solo z"}
		ids := []int{2, 3, 4, 5, 6, 7, 8, 9}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, id := range []int{0, 2, 7, 9} {
				got.Remove(id)
			}
		}()
		got.addBatch(ids, texts, nil, 1)
		<-done
		for _, id := range ids {
			got.Remove(id)
		}
		checkInvariants(t, got)
		if hits := got.Search("solo", 10, nil); len(hits) != 0 {
			t.Fatalf("Search(solo) = %v after removing every document with it", hits)
		}
	}
}

func TestAddBatchPanics(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ids   []int
		texts []string
	}{
		{"lengths", []int{0, 1}, []string{"a"}},
		{"negative", []int{0, -1}, []string{"a", "b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ix := New(Options{})
			defer func() {
				if recover() == nil {
					t.Errorf("AddBatch(%v) did not panic", tt.ids)
				}
				if ix.Len() != 0 {
					t.Errorf("AddBatch(%v) panicked after indexing %d documents", tt.ids, ix.Len())
				}
			}()
			ix.AddBatch(tt.ids, tt.texts)
		})
	}
}
