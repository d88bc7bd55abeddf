package engine

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
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

// pageVectors holds a scope's page vectors by page position, unit length;
// nil where a page is not embedded yet. The scope's mu guards it.
type pageVectors struct {
	loaded bool // the stored vectors were read
	vecs   [][]float32
	next   int // first page not yet embedded or skipped
	count  int // non-nil vecs
	// sending is how many pages before next are in the request being
	// made.
	sending int
}

// backlog is how many of the scope's pages are still to be embedded. The
// caller holds st.mu.
func (st *scopeState) backlog() int {
	if !st.vec.loaded {
		return len(st.turns)
	}
	return max(0, len(st.turns)-st.vec.next) + st.vec.sending
}

// noteNewPages schedules the scope's new pages for embedding; it never
// blocks. The caller holds st.mu.
func (s *Service) noteNewPages(st *scopeState) {
	e := &s.emb
	if e.embedder == nil || st.vec.loaded && st.vec.next >= len(st.turns) {
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
	loaded := st.vec.loaded
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
		kept := st.vec.load(st.turns, stored)
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
		st.vec.grow(len(st.turns))
		var pos []int
		var texts []string
		for p := st.vec.next; p < len(st.turns) && len(pos) < embedBatch; p++ {
			if st.vec.vecs[p] == nil {
				pos = append(pos, p)
				texts = append(texts, e.passagePrefix+truncateRunes(st.turns[p].Text(), maxEmbedRunes))
			}
			st.vec.next = p + 1
		}
		ids := make([]string, len(pos))
		for i, p := range pos {
			ids[i] = st.turns[p].ID
		}
		start := st.vec.next
		if len(pos) > 0 {
			start = pos[0]
		}
		st.vec.sending = len(pos)
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
			st.vec.next = min(st.vec.next, start)
			st.vec.sending = 0
			st.mu.Unlock()
			return err
		}
		saved := make([]memory.PageVector, 0, len(vecs))
		st.mu.Lock()
		for i, v := range vecs {
			if u := unit(v); u != nil {
				st.vec.set(pos[i], u)
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
		st.vec.sending = 0
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

// load places stored vectors at the positions of their turns and returns
// those that belong to a stored turn.
func (v *pageVectors) load(turns []*memory.Turn, stored []memory.PageVector) []memory.PageVector {
	v.grow(len(turns))
	v.loaded = true
	if len(stored) == 0 {
		return nil
	}
	byID := make(map[string][]float32, len(stored))
	for _, pv := range stored {
		byID[pv.TurnID] = pv.Vector
	}
	kept := make([]memory.PageVector, 0, len(turns))
	for p, t := range turns {
		vec, ok := byID[t.ID]
		if !ok {
			continue
		}
		kept = append(kept, memory.PageVector{TurnID: t.ID, Vector: vec})
		if u := unit(vec); u != nil && v.vecs[p] == nil {
			v.set(p, u)
		}
	}
	return kept
}

func (v *pageVectors) grow(n int) {
	if len(v.vecs) < n {
		v.vecs = append(v.vecs, make([][]float32, n-len(v.vecs))...)
	}
}

func (v *pageVectors) set(p int, u []float32) {
	if v.vecs[p] == nil {
		v.count++
	}
	v.vecs[p] = u
}

// unit returns v scaled to length 1, or nil when v is empty, zero or not
// finite.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil
	}
	inv := 1 / math.Sqrt(n)
	u := make([]float32, len(v))
	for i, x := range v {
		u[i] = float32(float64(x) * inv)
	}
	return u
}

// nearestPages returns up to k embedded pages by cosine similarity to the
// unit vector q, best first. The caller holds st.mu.
func nearestPages(st *scopeState, q []float32, k int) []lexical.Hit {
	top := make([]lexical.Hit, 0, k+1) // best first
	for p, v := range st.vec.vecs {
		if len(v) != len(q) {
			continue
		}
		var dot float32
		for i := range v {
			dot += v[i] * q[i]
		}
		sc := float64(dot)
		if len(top) == k && sc <= top[k-1].Score {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, sc, func(h lexical.Hit, sc float64) int { return cmp.Compare(sc, h.Score) })
		top = slices.Insert(top, i, lexical.Hit{ID: p, Score: sc})
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// fuse merges the lexical and the vector ranking by a weighted sum of
// normalised scores: a page scores (1-w)·lexical/best lexical plus
// w·(cosine-lowest)/(highest-lowest) over the vector list, w being the
// vector ranking's share; a page missing from a list scores 0 there. The
// lexical share keeps the scale of the lexical scores (the best is 1), so
// that the session evidence computed from them afterwards sees the same
// shape of scores as without vectors. Reciprocal rank fusion, which flattens
// the scores, ranked below words alone at every weight tried (README).
func fuse(lex, vec []lexical.Hit, w float64) []lexical.Hit {
	score := make(map[int]float64, len(lex)+len(vec))
	if len(lex) > 0 && lex[0].Score > 0 {
		for _, h := range lex {
			score[h.ID] += (1 - w) * h.Score / lex[0].Score
		}
	}
	if len(vec) > 0 {
		hi, lo := vec[0].Score, vec[len(vec)-1].Score
		for _, h := range vec {
			v := 1.0
			if hi > lo {
				v = (h.Score - lo) / (hi - lo)
			}
			score[h.ID] += w * v
		}
	}
	out := make([]lexical.Hit, 0, len(score))
	for id, sc := range score {
		out = append(out, lexical.Hit{ID: id, Score: sc})
	}
	sortHits(out)
	return out
}

// sortHits orders hits best first, newer first on ties.
func sortHits(hits []lexical.Hit) {
	slices.SortFunc(hits, func(a, b lexical.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
}

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
