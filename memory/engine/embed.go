package engine

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// WithEmbedder turns on vector retrieval: pages are embedded in the
// background after they are stored and fused with the lexical ranking by
// a weighted sum of normalised scores (Config.EmbeddingFusionWeight). The
// vectors are kept by the Store when it is a VectorStore (see ports.go);
// otherwise they are kept in memory only and computed again after a
// restart.
func WithEmbedder(e memory.Embedder) Option {
	return func(s *Service) { s.emb.embedder = e }
}

// Embedding tunables.
const (
	// embedBatch is how many pages go into one embedding request. It is
	// small so that a query sent while a batch is being embedded waits
	// for little at an endpoint that serves one request at a time.
	embedBatch = 16
	// maxEmbedRunes cuts a page before embedding; endpoints limit input
	// length (8,192 tokens for OpenAI's models).
	maxEmbedRunes = 6000
	// embedRetryWait is the pause after a failed embedding request before
	// the pages are tried again, when the failure is not one the circuit
	// breaker waits out (see embed_query.go).
	embedRetryWait = 30 * time.Second
	// queryEmbedTimeout bounds the query's embedding in a retrieval; past
	// it the ranking is lexical only.
	queryEmbedTimeout = 3 * time.Second
	// queryCacheSize bounds the cached query vectors.
	queryCacheSize = 512
)

// embedding is the Service's vector machinery; all zero without an
// embedder.
type embedding struct {
	embedder memory.Embedder
	store    memory.VectorStore
	// queryPrefix and passagePrefix are prepended to queries and to pages
	// before they are embedded (e5/bge-style "query: ", "passage: ").
	queryPrefix, passagePrefix string
	// weight is the vector ranking's share in the fusion, 0 to 1.
	weight float64

	once  sync.Once
	kick  chan struct{}
	mu    sync.Mutex
	dirty map[*scopeState]struct{}
	cache map[string][]float32 // query → vector

	lane    queryLane // queries in flight; page batches wait for them
	breaker breaker   // open while the endpoint is down
	// progress is closed and replaced whenever pages are embedded or the
	// breaker opens, waking flushes that wait for the backlog.
	progress chan struct{}
}

// space names the vectors' space as stored: the model, and the passage
// prefix when there is one, so that changing either embeds every page
// again.
func (e *embedding) space() string {
	if e.passagePrefix == "" {
		return e.embedder.Model()
	}
	return e.embedder.Model() + " passage:" + strconv.Quote(e.passagePrefix)
}

// backlog is how many of the scope's pages are still to be embedded.
func (st *scopeState) backlog() int {
	if !st.Vec.Loaded {
		return len(st.Turns)
	}
	return max(0, len(st.Turns)-st.Vec.Next) + st.Vec.Sending
}

// noteNewPages schedules the scope's new pages for embedding; it never blocks.
func (s *Service) noteNewPages(st *scopeState) {
	e := &s.emb
	if e.embedder == nil || st.Vec.Loaded && st.Vec.Next >= len(st.Turns) {
		return
	}
	e.once.Do(func() {
		e.kick = make(chan struct{}, 1)
		e.dirty = make(map[*scopeState]struct{})
		go s.embedLoop()
	})
	e.mu.Lock()
	e.dirty[st] = struct{}{}
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// embedLoop embeds the pages of scopes marked dirty until the service
// closes.
func (s *Service) embedLoop() {
	e := &s.emb
	for {
		select {
		case <-s.bgCtx.Done():
			return
		case <-e.kick:
		}
		e.mu.Lock()
		todo := make([]*scopeState, 0, len(e.dirty))
		for st := range e.dirty {
			todo = append(todo, st)
		}
		clear(e.dirty)
		e.mu.Unlock()
		var failed error
		for _, st := range todo {
			if failed != nil {
				e.mu.Lock()
				e.dirty[st] = struct{}{}
				e.mu.Unlock()
				continue
			}
			if err := s.embedScope(s.bgCtx, st); err != nil {
				if s.bgCtx.Err() != nil {
					return
				}
				e.mu.Lock()
				e.dirty[st] = struct{}{}
				e.mu.Unlock()
				failed = err
			}
		}
		if failed != nil {
			// An endpoint that is down is waited out by the breaker's
			// probes; any other failure is tried again after a pause.
			var wait <-chan struct{}
			var pause <-chan time.Time
			if endpointDown(failed) {
				wait = s.endpointFailed(failed)
			} else {
				s.log.Warn("cannot embed stored pages; retrying later", "wait", embedRetryWait, "err", failed)
				pause = time.After(embedRetryWait)
			}
			select {
			case <-s.bgCtx.Done():
				return
			case <-wait:
			case <-pause:
			}
			select {
			case e.kick <- struct{}{}:
			default:
			}
		}
	}
}

// embedScope loads the scope's stored vectors once, then embeds its pages
// that have none, a batch at a time, without holding st.mu during a
// request.
func (s *Service) embedScope(ctx context.Context, st *scopeState) error {
	e := &s.emb
	model := e.space()
	st.mu.RLock()
	loaded := st.Vec.Loaded
	st.mu.RUnlock()
	if !loaded {
		var stored []memory.PageVector
		if e.store != nil {
			var err error
			if stored, err = e.store.LoadVectors(ctx, st.scope, model); err != nil {
				s.log.Warn("cannot read stored vectors; embedding again", "scope", st.scope.Key(), "err", err)
			}
		}
		st.mu.Lock()
		kept := st.Vec.Load(st.Turns, stored)
		invalidateCentroids(st)
		st.mu.Unlock()
		s.embedProgress()
		if len(kept) < len(stored) {
			// Vectors of forgotten turns must not outlive them on disk.
			if _, err := s.saveCache(st, "vectors", func() error { return e.store.ReplaceVectors(ctx, st.scope, model, kept) }); err != nil {
				s.log.Warn("cannot drop the vectors of forgotten turns", "scope", st.scope.Key(), "err", err)
			}
		}
	}
	for {
		st.mu.Lock()
		st.Vec.Grow(len(st.Turns))
		var pos []int
		var texts []string
		for p := st.Vec.Next; p < len(st.Turns) && len(pos) < embedBatch; p++ {
			if st.Vec.Vecs[p] == nil {
				pos = append(pos, p)
				texts = append(texts, e.passagePrefix+truncateRunes(st.Turns[p].Text(), maxEmbedRunes))
			}
			st.Vec.Next = p + 1
		}
		ids := make([]string, len(pos))
		for i, p := range pos {
			ids[i] = st.Turns[p].ID
		}
		start := st.Vec.Next
		if len(pos) > 0 {
			start = pos[0]
		}
		st.Vec.Sending = len(pos)
		st.mu.Unlock()
		if len(pos) == 0 {
			s.embedProgress()
			return nil
		}
		var vecs [][]float32
		err := s.waitForQueries(ctx)
		if err == nil {
			vecs, err = e.embedder.Embed(ctx, texts)
			s.recordEmbedding(st.scope, texts, err)
		}
		if err == nil && len(vecs) != len(texts) {
			err = errVectorCount
		}
		if err != nil {
			st.mu.Lock()
			st.Vec.Next = min(st.Vec.Next, start)
			st.Vec.Sending = 0
			st.mu.Unlock()
			return err
		}
		saved := make([]memory.PageVector, 0, len(vecs))
		st.mu.Lock()
		for i, v := range vecs {
			if u := recall.Unit(v); u != nil {
				st.Vec.Set(pos[i], u)
				saved = append(saved, memory.PageVector{TurnID: ids[i], Vector: u})
				if st.midTerm != nil {
					// A page placed before it was embedded: its
					// session's centroid is summed again.
					if num, ok := st.midTerm.ByPage[ids[i]]; ok {
						st.midTerm.Sessions[num].CentroidOK = false
					}
				}
			}
		}
		st.Vec.Sending = 0
		st.mu.Unlock()
		s.embedProgress()
		if e.store != nil && len(saved) > 0 {
			ok, err := s.saveCache(st, "vectors", func() error { return e.store.SaveVectors(ctx, st.scope, model, saved) })
			if err != nil {
				s.log.Warn("cannot store page vectors; they are kept in memory", "scope", st.scope.Key(), "err", err)
			} else if !ok {
				return nil // st was dropped: its scope is read again at its next use
			}
		}
	}
}

var errVectorCount = errors.New("the embedding endpoint returned a different number of vectors than texts")

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
