package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestRetrieveSaysHowItRanked checks that a retrieval that ranks by words
// only although vectors are configured says so, and why, in its result.
func TestRetrieveSaysHowItRanked(t *testing.T) {
	tests := []struct {
		name       string
		embedder   func() *fakeEmbedder // nil: no embedder configured
		weight     float64
		wantMethod string
		wantWhy    string // a part of vector_fallback; "" for none
	}{
		{"no embedder", nil, 0.5, memory.RankedByWords, ""},
		{"fusion weight 0", func() *fakeEmbedder { return &fakeEmbedder{model: "fake/4"} }, 0, memory.RankedByWords, ""},
		{"vectors used", func() *fakeEmbedder { return &fakeEmbedder{model: "fake/4"} }, 0.5, memory.RankedByWordsVecs, ""},
		{"endpoint down", func() *fakeEmbedder {
			return &fakeEmbedder{model: "fake/4", fail: func() error { return memory.ErrLLMUnavailable }}
		}, 0.5, memory.RankedByWords, "not answering"},
		{"query rejected", func() *fakeEmbedder {
			return &fakeEmbedder{model: "fake/4", fail: func() error { return errors.New("400") }}
		}, 0.5, memory.RankedByWords, "failed to embed the query"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var opts []Option
				if tc.embedder != nil {
					opts = append(opts, WithEmbedder(tc.embedder()))
				}
				s := newTestService(t, newMemStore(), configWith(func(c *memory.Config) { c.EmbeddingFusionWeight = tc.weight }), opts...)
				defer s.Close(context.Background())
				addPair(t, s, "a", "We adopted a puppy", "Congratulations")
				synctest.Wait()
				res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "puppy"})
				if err != nil {
					t.Fatalf("Retrieve() = %v", err)
				}
				r := res.Ranking
				if r.Method != tc.wantMethod {
					t.Errorf("ranking method = %q, want %q", r.Method, tc.wantMethod)
				}
				switch {
				case tc.wantWhy == "" && (r.VectorFallback != "" || r.Note != ""):
					t.Errorf("ranking = %+v, want no fallback", r)
				case tc.wantWhy != "" && (!strings.Contains(r.VectorFallback, tc.wantWhy) || !strings.Contains(r.Note, "words only")):
					t.Errorf("ranking = %+v, want a fallback saying %q and a note saying words only", r, tc.wantWhy)
				}
			})
		})
	}
}

func TestRetrieveKeywords(t *testing.T) {
	s := newTestService(t, newMemStore(), configWith(nil))
	defer s.Close(context.Background())
	addPair(t, s, "a", "I finally brought home a puppy from the shelter", "So cute")
	addPair(t, s, "b", "The weather was awful", "Rain all day")
	addPair(t, s, "c", "Work was busy", "Mine too")
	tests := []struct {
		name     string
		keywords []string
		want     int // pages
		wantErr  string
	}{
		{"query alone misses", nil, 0, ""},
		{"keywords bridge the words", []string{"puppy", "dog"}, 1, ""},
		{"too many", make([]string, memory.MaxRetrieveKeywords+1), 0, "keywords"},
		{"too long", []string{strings.Repeat("x", memory.MaxKeywordBytes+1)}, 0, "keywords"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "What pet did I adopt?", Keywords: tc.keywords})
			if tc.wantErr != "" {
				if !errors.Is(err, memory.ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Retrieve() = %v, want an invalid-input error naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			if len(res.Pages) != tc.want {
				t.Errorf("pages = %d, want %d", len(res.Pages), tc.want)
			}
			if tc.want > 0 && (res.Pages[0].User != "I finally brought home a puppy from the shelter" || !strings.Contains(res.Injection, "puppy")) {
				t.Errorf("best page %q, injection %q; want the puppy page, injected", res.Pages[0].User, res.Injection)
			}
		})
	}
}
