package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

func withPrefixes(c *memory.Config) {
	c.EmbeddingQueryPrefix, c.EmbeddingPassagePrefix = "query: ", "passage: "
}

// recordingEmbedder records the first text of every request and holds
// requests whose first text starts with hold until release is closed.
type recordingEmbedder struct {
	fakeEmbedder
	hold    string
	release chan struct{}

	mu    sync.Mutex
	first []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.first = append(r.first, texts[0])
	r.mu.Unlock()
	if r.hold != "" && strings.HasPrefix(texts[0], r.hold) {
		select {
		case <-r.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return r.fakeEmbedder.Embed(ctx, texts)
}

// requests returns the first text of every request so far.
func (r *recordingEmbedder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.first)
}

func TestPageBatchesWaitWhileAQueryIsEmbedded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &recordingEmbedder{fakeEmbedder: fakeEmbedder{model: "fake/4"}, hold: "query: ", release: make(chan struct{})}
		s := newTestService(t, newMemStore(), configWith(withPrefixes), WithEmbedder(e))
		defer s.Close(context.Background())
		addPair(t, s, "a", "We adopted a puppy", "Congratulations")
		synctest.Wait()

		done := make(chan []string)
		go func() { done <- retrieveUsers(t, s, "Where does the hound sleep?") }()
		synctest.Wait() // the query is being embedded
		addPair(t, s, "b", "The hound sleeps all day", "Lazy")
		synctest.Wait() // the new page waits for the query
		want := []string{"passage: We adopted a puppy", "query: Where does the hound sleep?"}
		if got := e.requests(); !slices.Equal(trimTexts(got), want) {
			t.Fatalf("requests while the query is in flight = %q, want %q", got, want)
		}

		close(e.release)
		<-done
		synctest.Wait()
		got := e.requests()
		if len(got) != 3 || !strings.HasPrefix(got[2], "passage: The hound sleeps all day") {
			t.Errorf("requests after the query = %q, want the held page batch last", got)
		}
		if got := retrieveUsers(t, s, "Where does the hound sleep?"); len(got) == 0 || got[0] != "The hound sleeps all day" {
			t.Errorf("Retrieve() pages = %q, want the hound page first", got)
		}
	})
}

// trimTexts cuts each text at its first newline (a page is user and
// reply).
func trimTexts(texts []string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i], _, _ = strings.Cut(t, "\n")
	}
	return out
}

// switchEmbedder fails with ErrLLMUnavailable while down.
type switchEmbedder struct {
	recordingEmbedder
	mu   sync.Mutex
	down bool
}

func (s *switchEmbedder) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *switchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		s.recordingEmbedder.mu.Lock()
		s.first = append(s.first, texts[0])
		s.recordingEmbedder.mu.Unlock()
		return nil, memory.ErrLLMUnavailable
	}
	return s.recordingEmbedder.Embed(ctx, texts)
}

func TestBreakerSkipsTheEndpointWhileItIsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &switchEmbedder{recordingEmbedder: recordingEmbedder{fakeEmbedder: fakeEmbedder{model: "fake/4"}}, down: true}
		s := newTestService(t, newMemStore(), configWith(nil), WithEmbedder(e))
		defer s.Close(context.Background())
		addPair(t, s, "a", "We adopted a puppy", "Congratulations")
		addPair(t, s, "b", "The hound sleeps all day", "Lazy")
		synctest.Wait() // the page batch failed: the breaker is open

		before := len(e.requests())
		for _, q := range []string{"puppy", "Tell me about the puppy"} {
			if got := retrieveUsers(t, s, q); len(got) != 1 || got[0] != "We adopted a puppy" {
				t.Errorf("Retrieve(%q) while the endpoint is down = %q, want the lexical match only", q, got)
			}
		}
		if got := e.requests(); len(got) != before {
			t.Errorf("requests while the breaker is open = %q, want none after the first %d", got[before:], before)
		}
		res, err := s.Flush(t.Context(), memory.FlushRequest{})
		if err != nil {
			t.Fatalf("Flush() = %v", err)
		}
		if res.EmbeddingBacklog != 2 || !strings.Contains(res.Reason, "MNEMO_EMBEDDING_BASE_URL") {
			t.Errorf("Flush() backlog %d, reason %q; want 2 and a reason naming MNEMO_EMBEDDING_BASE_URL", res.EmbeddingBacklog, res.Reason)
		}

		// Probes back off: a few in ten minutes, not one per second.
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(e.requests()) - before; n < 3 || n > 20 {
			t.Errorf("%d probes in ten minutes down, want between 3 and 20", n)
		}

		e.setDown(false)
		time.Sleep(probeMaxWait)
		synctest.Wait()
		if got := retrieveUsers(t, s, "Tell me about the puppy"); len(got) < 2 || got[1] != "The hound sleeps all day" {
			t.Errorf("Retrieve() after the endpoint recovered = %q, want both dog pages", got)
		}
		res, err = s.Flush(t.Context(), memory.FlushRequest{})
		if err != nil {
			t.Fatalf("Flush() = %v", err)
		}
		if res.EmbeddingBacklog != 0 || strings.Contains(res.Reason, "embedded") {
			t.Errorf("Flush() after recovery: backlog %d, reason %q; want 0 and no word of embedding", res.EmbeddingBacklog, res.Reason)
		}
	})
}

func TestQueryFailureOpensTheBreaker(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantOpen bool
	}{
		{"endpoint unavailable", memory.ErrLLMUnavailable, true},
		{"no reply in time", context.DeadlineExceeded, true},
		{"request rejected", errors.New("the endpoint rejected the request (400)"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := &fakeEmbedder{model: "fake/4", fail: func() error { return tc.err }}
				s := newTestService(t, newMemStore(), configWith(nil), WithEmbedder(e))
				defer s.Close(context.Background())
				retrieveUsers(t, s, "puppy")
				retrieveUsers(t, s, "hound")
				calls, _ := e.stats()
				wantCalls := 2
				if tc.wantOpen {
					wantCalls = 1
				}
				if s.breakerOpen() != tc.wantOpen || calls != wantCalls {
					t.Errorf("breaker open %v after %d calls, want %v after %d", s.breakerOpen(), calls, tc.wantOpen, wantCalls)
				}
			})
		})
	}
}

func TestFlushWaitsForTheEmbeddingBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &recordingEmbedder{fakeEmbedder: fakeEmbedder{model: "fake/4"}, hold: "passage: ", release: make(chan struct{})}
		s := newTestService(t, newMemStore(), configWith(func(c *memory.Config) {
			withPrefixes(c)
			c.FlushTimeout = 10 * time.Second
		}), WithEmbedder(e))
		defer s.Close(context.Background())
		for i := range embedBatch + 1 {
			addPair(t, s, "a", "puppy number "+strings.Repeat("x", i), "ok")
		}
		res, err := s.Flush(t.Context(), memory.FlushRequest{}) // the first batch is held past the bound
		if err != nil {
			t.Fatalf("Flush() = %v", err)
		}
		if res.EmbeddingBacklog != embedBatch+1 || !strings.Contains(res.Reason, "being embedded") {
			t.Errorf("Flush() with a held batch: backlog %d, reason %q; want %d, being embedded", res.EmbeddingBacklog, res.Reason, embedBatch+1)
		}

		flushed := make(chan *memory.FlushResult)
		go func() {
			res, err := s.Flush(context.Background(), memory.FlushRequest{})
			if err != nil {
				t.Errorf("Flush() = %v", err)
			}
			flushed <- res
		}()
		synctest.Wait()
		close(e.release)
		res = <-flushed
		if res.EmbeddingBacklog != 0 || strings.Contains(res.Reason, "embedded") {
			t.Errorf("Flush() = backlog %d, reason %q; want it to wait until every page is embedded", res.EmbeddingBacklog, res.Reason)
		}
	})
}

func TestFuseWeighsTheRankings(t *testing.T) {
	lex := []lexical.Hit{{ID: 1, Score: 9}, {ID: 2, Score: 5}, {ID: 3, Score: 1}}
	vec := []lexical.Hit{{ID: 4, Score: 0.9}, {ID: 3, Score: 0.8}, {ID: 1, Score: 0.7}}
	tests := []struct {
		w    float64
		want []int
	}{
		{0, []int{1, 2, 3, 4}}, // words only; 4 scores 0 and comes last
		{0.3, []int{1, 2, 4, 3}},
		{0.7, []int{4, 3, 1, 2}},
		{1, []int{4, 3, 2, 1}}, // vectors only; 1 is the lowest vector and ties with 2 at 0, newer first
	}
	for _, tc := range tests {
		var got []int
		for _, h := range recall.Fuse(lex, vec, tc.w) {
			got = append(got, h.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("fuse(w=%g) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

func TestZeroFusionWeightEmbedsNoQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &recordingEmbedder{fakeEmbedder: fakeEmbedder{model: "fake/4"}}
		s := newTestService(t, newMemStore(), configWith(func(c *memory.Config) { c.EmbeddingFusionWeight = 0 }), WithEmbedder(e))
		defer s.Close(context.Background())
		addPair(t, s, "a", "We adopted a puppy", "Congratulations")
		addPair(t, s, "b", "The hound sleeps all day", "Lazy")
		synctest.Wait()
		if got := retrieveUsers(t, s, "Tell me about the puppy"); len(got) != 1 {
			t.Errorf("Retrieve() = %q, want the lexical match only", got)
		}
		// The pages may go in one batch or two (the second add can come
		// while the first batch is out); the query must never be sent.
		got := e.requests()
		if len(got) == 0 {
			t.Errorf("no requests; want the pages embedded")
		}
		for _, r := range got {
			if strings.Contains(r, "Tell me about the puppy") {
				t.Errorf("requests = %q, want the page batches only, never the query", got)
			}
		}
	})
}

func TestPassagePrefixChangeEmbedsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, vectors := newMemStore(), newMemVectors()
		open := func(prefix string) (*Service, *recordingEmbedder) {
			e := &recordingEmbedder{fakeEmbedder: fakeEmbedder{model: "fake/4"}}
			s := newTestService(t, storeWithVectors{store, vectors}, configWith(func(c *memory.Config) { c.EmbeddingPassagePrefix = prefix }), WithEmbedder(e))
			return s, e
		}
		s, _ := open("")
		addPair(t, s, "a", "We adopted a puppy", "Congratulations")
		addPair(t, s, "b", "My car broke down", "Oh no")
		synctest.Wait()
		s.Close(context.Background())

		for _, step := range []struct {
			prefix string
			want   []string // page texts embedded after the restart
		}{
			{"", nil},
			{"passage: ", []string{"passage: We adopted a puppy"}},
			{"passage: ", nil},
			{"", []string{"We adopted a puppy"}},
		} {
			s, e := open(step.prefix)
			if _, err := s.Flush(t.Context(), memory.FlushRequest{}); err != nil {
				t.Fatalf("Flush() = %v", err)
			}
			if got := trimTexts(e.requests()); !slices.Equal(got, step.want) {
				t.Errorf("passage prefix %q: requests = %q, want %q", step.prefix, got, step.want)
			}
			s.Close(context.Background())
		}
	})
}
