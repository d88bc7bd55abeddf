package engine

import (
	"context"
	"errors"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// The query lane and the circuit breaker of vector retrieval.
//
// A retrieval embeds its query on its own lane: the request is sent at
// once, and page batches wait while a query is in flight, so that an
// endpoint that serves one request at a time answers the query after at
// most the one small batch it is already embedding.
//
// When the endpoint is down (unreachable, failing, or slower than
// queryEmbedTimeout) the breaker opens: retrievals rank by words at once,
// without a request, and a background probe tries the endpoint again after
// probeFirstWait, doubling up to probeMaxWait. The first answer closes the
// breaker and the page backlog is embedded.
const (
	probeFirstWait = time.Second
	probeMaxWait   = time.Minute
	// probeText is what a probe embeds.
	probeText = "mnemo"
)

// queryLane counts the queries being embedded. Its fields are guarded by
// embedding.mu.
type queryLane struct {
	n     int
	quiet chan struct{} // closed when n drops to 0; nil while n is 0
}

// breaker is the endpoint's circuit breaker. Its fields are guarded by
// embedding.mu.
type breaker struct {
	open bool
	up   chan struct{} // closed when the breaker closes
}

// Why a retrieval ranked by words only although vectors are configured
// (memory.RankingInfo.VectorFallback).
const (
	fallbackBreaker   = "the embeddings endpoint is not answering; retrying in the background"
	fallbackDown      = "the embeddings endpoint did not answer the query in time or was unreachable"
	fallbackFailed    = "the embeddings endpoint failed to embed the query"
	fallbackCancelled = "the retrieval was cancelled while the query was being embedded"
	fallbackNoPages   = "no stored exchange has been embedded yet"
)

// queryVector embeds a retrieval query, with a small cache. It returns nil
// when no embedder is configured or the fusion gives vectors no weight
// (with fallback ""), or when the breaker is open or the endpoint fails,
// fallback then saying why (the ranking is then lexical only).
func (s *Service) queryVector(ctx context.Context, scope memory.Scope, query string) (v []float32, fallback string) {
	e := &s.emb
	if e.embedder == nil || e.weight == 0 {
		return nil, ""
	}
	e.mu.Lock()
	v, ok := e.cache[query]
	open := e.breaker.open
	if !ok && !open {
		e.lane.n++
		if e.lane.n == 1 {
			e.lane.quiet = make(chan struct{})
		}
	}
	e.mu.Unlock()
	if ok {
		return v, ""
	}
	if open {
		return nil, fallbackBreaker
	}
	defer s.leaveLane()

	qctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	qtext := []string{e.queryPrefix + truncateRunes(query, maxEmbedRunes)}
	vecs, err := e.embedder.Embed(qctx, qtext)
	s.recordEmbedding(scope, qtext, err)
	if err == nil && len(vecs) != 1 {
		err = errVectorCount
	}
	if err != nil {
		switch {
		case ctx.Err() != nil: // the caller gave up, not the endpoint
			return nil, fallbackCancelled
		case endpointDown(err):
			s.endpointFailed(err)
			return nil, fallbackDown
		default:
			s.log.Warn("cannot embed the query; ranking by words only", "err", err)
			return nil, fallbackFailed
		}
	}
	v = recall.Unit(vecs[0])
	e.mu.Lock()
	if e.cache == nil || len(e.cache) >= queryCacheSize {
		e.cache = make(map[string][]float32)
	}
	e.cache[query] = v
	e.mu.Unlock()
	return v, ""
}

// rankingInfo says how a retrieval ranked its pages: qv is the query's
// vector (nil when none), fallback why there is none (queryVector), and
// embedded how many pages of the scope have a vector.
func rankingInfo(qv []float32, fallback string, embedded int) memory.RankingInfo {
	if qv != nil && embedded == 0 {
		fallback = fallbackNoPages
	}
	if fallback == "" && qv != nil {
		return memory.RankingInfo{Method: memory.RankedByWordsVecs}
	}
	info := memory.RankingInfo{Method: memory.RankedByWords, VectorFallback: fallback}
	if fallback != "" {
		info.Note = "Vector search was not used for this recall (" + fallback + "); exchanges were ranked by words only, so ones worded differently from the query may be missing."
	}
	return info
}

func (s *Service) leaveLane() {
	e := &s.emb
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lane.n--
	if e.lane.n == 0 {
		close(e.lane.quiet)
		e.lane.quiet = nil
	}
}

// waitForQueries returns once no query is being embedded, or with ctx's
// error.
func (s *Service) waitForQueries(ctx context.Context) error {
	e := &s.emb
	for {
		e.mu.Lock()
		quiet := e.lane.quiet
		e.mu.Unlock()
		if quiet == nil {
			return nil
		}
		select {
		case <-quiet:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// endpointDown reports whether err says the endpoint is unavailable rather
// than that the request was wrong.
func endpointDown(err error) bool {
	return errors.Is(err, memory.ErrLLMUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// endpointFailed opens the breaker, if it is not open yet, and starts the
// probe. The returned channel is closed when the breaker closes.
func (s *Service) endpointFailed(err error) <-chan struct{} {
	e := &s.emb
	e.mu.Lock()
	if e.breaker.open {
		up := e.breaker.up
		e.mu.Unlock()
		return up
	}
	e.breaker.open = true
	up := make(chan struct{})
	e.breaker.up = up
	e.mu.Unlock()
	s.log.Warn("the embeddings endpoint is not answering; ranking by words only until it does (retrying in the background)", "err", err)
	s.embedProgress()
	go s.probeEndpoint()
	return up
}

// breakerOpen reports whether the endpoint is taken to be down.
func (s *Service) breakerOpen() bool {
	s.emb.mu.Lock()
	defer s.emb.mu.Unlock()
	return s.emb.breaker.open
}

// probeEndpoint tries the endpoint with backoff until it answers, then
// closes the breaker and resumes embedding pages.
func (s *Service) probeEndpoint() {
	e := &s.emb
	wait := probeFirstWait
	for {
		timer := time.NewTimer(wait)
		select {
		case <-s.bgCtx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(s.bgCtx, queryEmbedTimeout)
		_, err := e.embedder.Embed(ctx, []string{e.queryPrefix + probeText})
		cancel()
		if s.bgCtx.Err() != nil {
			return
		}
		if err == nil {
			break
		}
		s.log.Debug("the embeddings endpoint is still not answering", "next_try", wait, "err", err)
		wait = min(2*wait, probeMaxWait)
	}
	e.mu.Lock()
	e.breaker.open = false
	close(e.breaker.up)
	e.breaker.up = nil
	e.mu.Unlock()
	s.log.Info("the embeddings endpoint answers again; ranking by words and vectors")
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// progressChan returns the channel that embedProgress closes next.
func (s *Service) progressChan() <-chan struct{} {
	e := &s.emb
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.progress == nil {
		e.progress = make(chan struct{})
	}
	return e.progress
}

// embedProgress wakes whoever waits for the backlog to shrink.
func (s *Service) embedProgress() {
	e := &s.emb
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.progress != nil {
		close(e.progress)
		e.progress = nil
	}
}

// awaitEmbeddings waits until the scope's pages are all embedded, the
// breaker opens or ctx ends, and returns how many pages are still to be
// embedded; 0 without an embedder.
func (s *Service) awaitEmbeddings(ctx context.Context, scope memory.Scope) (int, error) {
	if s.emb.embedder == nil {
		return 0, nil
	}
	st, err := s.loadedState(context.WithoutCancel(ctx), scope)
	if err != nil {
		return 0, err
	}
	s.noteNewPages(st)
	st.mu.Unlock()
	for {
		progress := s.progressChan()
		st.mu.RLock()
		n := st.backlog()
		st.mu.RUnlock()
		if n == 0 || s.breakerOpen() {
			return n, nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return n, nil
		}
	}
}
