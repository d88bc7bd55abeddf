package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// fakeEmbedder maps each text to counts of a few concepts, so that words
// with no letter in common ("puppy", "dog") can share a direction.
type fakeEmbedder struct {
	model string
	fail  func() error // nil: never fails

	mu    sync.Mutex
	calls int
	texts int
}

var concepts = [][]string{{"dog", "puppy", "hound"}, {"car", "automobile", "sedan"}, {"tea", "chai", "matcha"}}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		if err := f.fail(); err != nil {
			return nil, err
		}
	}
	f.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.01 // never the zero vector
		for _, w := range strings.Fields(strings.ToLower(t)) {
			for c, words := range concepts {
				for _, cw := range words {
					if strings.Trim(w, ".,?!") == cw {
						v[c]++
					}
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func (f *fakeEmbedder) Model() string { return f.model }

func (f *fakeEmbedder) stats() (calls, texts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.texts
}

// memVectors is an in-memory VectorStore.
type memVectors struct {
	mu    sync.Mutex
	model map[string]string
	vecs  map[string][]memory.PageVector
}

func newMemVectors() *memVectors {
	return &memVectors{model: map[string]string{}, vecs: map[string][]memory.PageVector{}}
}

func (m *memVectors) LoadVectors(_ context.Context, sc memory.Scope, model string) ([]memory.PageVector, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model[sc.Key()] != model {
		return nil, nil
	}
	return append([]memory.PageVector(nil), m.vecs[sc.Key()]...), nil
}

func (m *memVectors) SaveVectors(_ context.Context, sc memory.Scope, model string, vecs []memory.PageVector) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model[sc.Key()] != model {
		m.model[sc.Key()], m.vecs[sc.Key()] = model, nil
	}
	m.vecs[sc.Key()] = append(m.vecs[sc.Key()], vecs...)
	return nil
}

func (m *memVectors) ReplaceVectors(_ context.Context, sc memory.Scope, model string, vecs []memory.PageVector) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.model[sc.Key()], m.vecs[sc.Key()] = model, append([]memory.PageVector(nil), vecs...)
	return nil
}

func (m *memVectors) ids(sc memory.Scope) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, v := range m.vecs[sc.Key()] {
		out = append(out, v.TurnID)
	}
	return out
}

func TestStoredVectorsOfForgottenTurnsAreDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, vectors := newMemStore(), newMemVectors()
		s := newTestService(t, storeWithVectors{store, vectors}, memory.DefaultConfig(), WithEmbedder(&fakeEmbedder{model: "fake/4"}))
		addPair(t, s, "t", "We adopted a puppy", "Congratulations")
		synctest.Wait()
		s.Close(context.Background())
		sc := memory.Scope{UserID: memory.DefaultUserID}
		kept := vectors.ids(sc)
		if len(kept) != 1 {
			t.Fatalf("stored vectors = %q, want one", kept)
		}
		// A turn forgotten since: its vector is still in the store.
		vectors.SaveVectors(t.Context(), sc, "fake/4", []memory.PageVector{{TurnID: "turn_forgotten", Vector: []float32{1, 0, 0, 0}}})

		s = newTestService(t, storeWithVectors{store, vectors}, memory.DefaultConfig(), WithEmbedder(&fakeEmbedder{model: "fake/4"}))
		defer s.Close(context.Background())
		retrieveUsers(t, s, "puppy")
		synctest.Wait()
		if got := vectors.ids(sc); strings.Join(got, ",") != strings.Join(kept, ",") {
			t.Errorf("stored vectors after reload = %q, want %q", got, kept)
		}
	})
}

func retrieveUsers(t *testing.T, s *Service, query string) []string {
	t.Helper()
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: query, MaxResults: 10})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	var out []string
	for _, p := range res.Pages {
		out = append(out, p.User)
	}
	return out
}

func TestEmbedderFindsPagesWithoutSharedWords(t *testing.T) {
	tests := []struct {
		name     string
		embedder bool
		want     []string
	}{
		{"words only without an embedder", false, []string{"We adopted a puppy named Rex"}},
		{"vectors fused in with one", true, []string{"We adopted a puppy named Rex", "The hound sleeps all day"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var opts []Option
				if tc.embedder {
					opts = append(opts, WithEmbedder(&fakeEmbedder{model: "fake/4"}))
				}
				s := newTestService(t, newMemStore(), memory.DefaultConfig(), opts...)
				defer s.Close(context.Background())
				addPair(t, s, "a", "We adopted a puppy named Rex", "Congratulations")
				addPair(t, s, "b", "My car broke down", "Oh no")
				addPair(t, s, "c", "The hound sleeps all day", "Lazy")
				synctest.Wait()
				got := retrieveUsers(t, s, "Tell me about the puppy")
				// Vectors rank every embedded page; the order is what counts.
				if len(got) < len(tc.want) || strings.Join(got[:len(tc.want)], "|") != strings.Join(tc.want, "|") || !tc.embedder && len(got) != len(tc.want) {
					t.Errorf("Retrieve() pages = %q, want %q", got, tc.want)
				}
			})
		})
	}
}

func TestEmbeddingsPersistAndModelChangeInvalidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, vectors := newMemStore(), newMemVectors()
		first := &fakeEmbedder{model: "fake/4"}
		s := newTestService(t, storeWithVectors{store, vectors}, memory.DefaultConfig(), WithEmbedder(first))
		for _, u := range []string{"We adopted a puppy", "My car broke down", "I drink chai"} {
			addPair(t, s, "t", u, "ok")
		}
		synctest.Wait()
		s.Close(context.Background())
		if _, texts := first.stats(); texts != 3 {
			t.Fatalf("embedded %d texts, want 3", texts)
		}

		tests := []struct {
			name      string
			model     string
			wantTexts int // pages embedded again after the restart
		}{
			{"same model: nothing embedded again", "fake/4", 0},
			{"changed model: everything embedded again", "fake/8", 3},
		}
		for _, tc := range tests {
			e := &fakeEmbedder{model: tc.model}
			s := newTestService(t, storeWithVectors{store, vectors}, memory.DefaultConfig(), WithEmbedder(e))
			retrieveUsers(t, s, "hound") // loads the scope; the query is embedded
			synctest.Wait()
			if _, texts := e.stats(); texts-1 != tc.wantTexts {
				t.Errorf("%s: embedded %d page texts, want %d", tc.name, texts-1, tc.wantTexts)
			}
			if got := retrieveUsers(t, s, "hound"); len(got) == 0 || got[0] != "We adopted a puppy" {
				t.Errorf("%s: pages = %q, want the puppy page first", tc.name, got)
			}
			s.Close(context.Background())
		}
	})
}

func TestEmbedderFailureKeepsLexicalAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := true
		var mu sync.Mutex
		e := &fakeEmbedder{model: "fake/4", fail: func() error {
			mu.Lock()
			defer mu.Unlock()
			if down {
				return memory.ErrLLMUnavailable
			}
			return nil
		}}
		s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithEmbedder(e))
		defer s.Close(context.Background())
		addPair(t, s, "a", "We adopted a puppy", "Congratulations")
		addPair(t, s, "b", "The hound sleeps all day", "Lazy")
		synctest.Wait()
		if got := retrieveUsers(t, s, "puppy"); len(got) != 1 {
			t.Errorf("pages while the endpoint is down = %q, want the lexical match only", got)
		}
		mu.Lock()
		down = false
		mu.Unlock()
		synctest.Wait() // the worker is waiting out embedRetryWait
		waitFor(t, func() bool { _, n := e.stats(); return n >= 2 })
		if got := retrieveUsers(t, s, "puppy"); len(got) < 2 || got[1] != "The hound sleeps all day" {
			t.Errorf("pages after the endpoint recovered = %q, want both dog pages", got)
		}
	})
}

// waitFor advances the bubble's clock until cond holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 100 {
		if cond() {
			return
		}
		time.Sleep(embedRetryWait)
		synctest.Wait()
	}
	t.Fatal("condition never held")
}

// memMidTerm is an in-memory MidTermStore that keeps the state as JSON,
// as a file would.
type memMidTerm struct {
	mu    sync.Mutex
	saved map[string][]byte
}

func (m *memMidTerm) LoadMidTerm(_ context.Context, sc memory.Scope) (*memory.MidTermState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.saved[sc.Key()]
	if !ok {
		return nil, nil
	}
	var st memory.MidTermState
	return &st, json.Unmarshal(b, &st)
}

func (m *memMidTerm) SaveMidTerm(_ context.Context, sc memory.Scope, st *memory.MidTermState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saved == nil {
		m.saved = map[string][]byte{}
	}
	m.saved[sc.Key()] = b
	return nil
}

// TestVectorsGroupSessionsAcrossRestart checks the vector path of the
// mid-term tier: pages with no word in common but one meaning join one
// session when an embedder is configured, and after a restart (sessions
// and vectors loaded from storage, centroids summed again) a new page
// still finds that session.
func TestVectorsGroupSessionsAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, vectors, mid := newMemStore(), newMemVectors(), &memMidTerm{}
		cfg := memory.DefaultConfig()
		cfg.ShortTermCapacity = 1
		start := func() *Service {
			s, err := NewService(cfg, storeWithVectorsMidTerm{store, vectors, mid}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)),
				WithEmbedder(&fakeEmbedder{model: "fake/4"}))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		sessionsOf := func(s *Service) map[string]int {
			view, err := s.MidTerm(t.Context(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			for i, ses := range view.Sessions {
				for _, p := range ses.Pages {
					out[p.ID] = i
				}
			}
			return out
		}
		s := start()
		var ids []string
		for _, u := range []string{"We adopted a puppy", "My sedan broke down", "The hound sleeps all day", "Rex the dog chews shoes"} {
			res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: u, AgentResponse: "ok"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.TurnIDs...)
			synctest.Wait() // embedded before the next exchange pushes it out of the window
			time.Sleep(2 * time.Hour)
		}
		got := sessionsOf(s)
		if got[ids[0]] != got[ids[2]] || got[ids[0]] == got[ids[1]] {
			t.Fatalf("sessions by page = %v, want the puppy and the hound together, the sedan apart", got)
		}
		s.Close(context.Background())

		s = start()
		defer s.Close(context.Background())
		retrieveUsers(t, s, "dog") // loads the scope; vectors load in the background
		synctest.Wait()
		if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: "one more", AgentResponse: "ok"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got = sessionsOf(s)
		if got[ids[3]] != got[ids[0]] {
			t.Errorf("after the restart, sessions by page = %v: the dog page should join the puppy session", got)
		}
	})
}
