package chatwords

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestText: n words of the vocabulary, the same for the same seed, and
// the head of the list drawn more often than its tail.
func TestText(t *testing.T) {
	for _, n := range []int{0, 1, 7, 400} {
		got := Text(rand.New(rand.NewPCG(1, 2)), n)
		words := strings.Fields(got)
		if len(words) != n {
			t.Fatalf("Text(%d) has %d words: %q", n, len(words), got)
		}
		for _, w := range words {
			if !slices.Contains(Words, w) {
				t.Fatalf("Text(%d) holds %q, not a word of the vocabulary", n, w)
			}
		}
		if again := Text(rand.New(rand.NewPCG(1, 2)), n); again != got {
			t.Fatalf("Text(%d) with the same seed: %q, then %q", n, got, again)
		}
	}
	head, tail := 0, 0
	for _, w := range strings.Fields(Text(rand.New(rand.NewPCG(3, 4)), 10000)) {
		if i := slices.Index(Words, w); i < len(Words)/4 {
			head++
		} else if i >= 3*len(Words)/4 {
			tail++
		}
	}
	if head <= 2*tail {
		t.Errorf("head of the list drawn %d times, tail %d: want the head far more often", head, tail)
	}
}
