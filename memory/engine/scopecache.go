package engine

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// watchFallback bounds how long an announced-fresh state is trusted
// without asking the store, in case the watch lost an announcement
// without noticing yet.
const watchFallback = 5 * time.Second

// scopeCache is the Service's bookkeeping of its scope states.
type scopeCache struct {
	budget int64        // bytes; Config.ScopeCacheMB
	bytes  int64        // sum of the sizes of the states in Service.scopes; under Service.mu
	clock  atomic.Int64 // use counter, for least-recently-used order
	// trimming says an eviction pass is running.
	trimming atomic.Bool

	// watching says announcements arrive (the watch is listening);
	// epoch counts the zero-Scope announcements.
	watching atomic.Bool
	epoch    atomic.Uint64
}

// Estimated costs of a state beyond its text, measured on LoCoMo-like
// exchanges (see TestScopeStateSizeEstimate): the index postings, turn
// structs and maps per turn, and a fixed cost per state.
const (
	stateBaseBytes  = 8 << 10
	turnBytes       = 600
	textFactor      = 3
	tokenCacheBytes = 96
	factBytes       = 512
	sessionBytes    = 2 << 10
)

// estimate returns st's approximate size in memory.
func (st *scopeState) estimate() int64 {
	n := int64(stateBaseBytes) + int64(len(st.Turns))*turnBytes + st.textBytes*textFactor
	st.tokenMu.Lock()
	n += int64(len(st.tokenCache)) * tokenCacheBytes
	st.tokenMu.Unlock()
	if st.doc != nil {
		n += int64(len(st.doc.Facts)) * factBytes
	}
	if st.midTerm != nil {
		n += int64(len(st.midTerm.Sessions)) * sessionBytes
	}
	for _, v := range st.Vec.Vecs {
		if v != nil {
			n += int64(st.Vec.Count) * int64(len(v)*4+24)
			break
		}
	}
	return n
}

// noteUse marks st as just used and records its new size; when the states
// outgrow the budget it starts an eviction pass.
func (s *Service) noteUse(st *scopeState) {
	st.used.Store(s.cache.clock.Add(1))
	size := st.estimate()
	s.mu.Lock()
	if s.scopes[st.scope.Key()] == st {
		s.cache.bytes += size - st.size
		st.size = size
	}
	over := s.cache.bytes > s.cache.budget
	s.mu.Unlock()
	if over && s.cache.trimming.CompareAndSwap(false, true) {
		// In the caller's path: a pass only takes states it can lock at
		// once and drops them from a map, and evicting to 90 % of the
		// budget makes passes rare.
		s.trim(st)
		s.cache.trimming.Store(false)
	}
}

// trim evicts the least recently used states until the rest fit the
// budget. keep (the state that triggered it, which its caller holds) is
// not evicted. States in use (locked), or with unsaved work, are skipped; their
// work is saved so that a later pass can drop them.
func (s *Service) trim(keep *scopeState) {
	s.mu.Lock()
	states := make([]*scopeState, 0, len(s.scopes))
	for _, st := range s.scopes {
		if st != keep {
			states = append(states, st)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(states, func(a, b *scopeState) int {
		return int(a.used.Load() - b.used.Load())
	})
	// Evict down to 90 % of the budget, so that a pass is not due again
	// at the next use.
	target := s.cache.budget - s.cache.budget/10
	for _, st := range states {
		s.mu.Lock()
		done := s.cache.bytes <= target
		s.mu.Unlock()
		if done {
			return
		}
		s.evict(st)
	}
}

// evict drops st from the cache unless it is in use or holds work that
// exists only in memory, which it saves in the background instead.
func (s *Service) evict(st *scopeState) bool {
	if !st.mu.TryLock() {
		return false
	}
	defer st.mu.Unlock()
	if st.snapBusy {
		return false
	}
	if m := st.midTerm; m != nil && (m.Dirty || m.Saving) {
		if s.midTermStore == nil {
			// The sessions live only here (their visit counts would be
			// lost): such a scope stays.
			return false
		}
		s.saveMidTermSoon(st)
		return false
	}
	if s.emb.embedder != nil && st.Vec.Next < len(st.Turns) {
		return false // pages still to embed
	}
	if s.pageStore != nil && st.snapshotDue(snapshotAtClose) {
		s.savePageSnapshot(st)
		return false
	}
	// Retired, an evicted state that a background task still holds (the
	// embedder) never writes a cache again: a later forget cannot find it
	// to retire it.
	if !st.saveMu.TryLock() {
		return false // a cache of it is being saved
	}
	st.retired = true
	st.saveMu.Unlock()
	s.mu.Lock()
	ok := s.removeStateLocked(st)
	s.mu.Unlock()
	if ok {
		s.log.Debug("scope state evicted from memory", "scope", st.scope.Key())
	}
	return ok
}

// removeStateLocked takes st out of the cache, if it is still there; the
// caller holds s.mu. A state taken out is never used again: whoever
// locks it next finds it gone (liveState) and takes the new one.
func (s *Service) removeStateLocked(st *scopeState) bool {
	if s.scopes[st.scope.Key()] != st {
		return false
	}
	delete(s.scopes, st.scope.Key())
	s.cache.bytes -= st.size
	st.size = 0
	return true
}

// CacheStats reports the scope states held in memory.
func (s *Service) CacheStats() memory.CacheStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return memory.CacheStats{Scopes: len(s.scopes), Bytes: s.cache.bytes, Budget: s.cache.budget}
}

// fresh reports whether st can be used without asking the store: the store
// announces changes, none was announced for st since it was last read, and
// that read is recent.
func (s *Service) fresh(st *scopeState) bool {
	return s.cache.watching.Load() && st.docReady &&
		st.seenChanges == st.changes.Load() && st.seenEpoch == s.cache.epoch.Load() &&
		time.Since(st.syncedAt) < watchFallback
}

// watch follows the store's announcements until the Service closes.
func (s *Service) watch(w memory.ScopeWatcher) {
	defer s.watching.Done()
	err := w.Watch(s.bgCtx, s.scopeChanged)
	s.cache.watching.Store(false)
	if err != nil && s.bgCtx.Err() == nil {
		s.log.Warn("stopped watching the store for changes; every use reads it", "err", err)
	}
}

// scopeChanged handles one announcement: the scope's state (if loaded)
// is read again on its next use, and with a model configured the scope's
// pending turns — which may be another process's — are scheduled, so
// that work left by a process that stopped is picked up.
func (s *Service) scopeChanged(scope memory.Scope) {
	if scope == (memory.Scope{}) {
		s.cache.epoch.Add(1)
		s.cache.watching.Store(true)
		return
	}
	s.invalidate(scope)
	if s.llm == nil {
		return
	}
	s.mu.Lock()
	_, loaded := s.scopes[scope.Key()]
	s.mu.Unlock()
	if loaded {
		s.queue.schedule(scope, anyThread, memory.Signals{}, s.queue.debounce, false)
	}
}

// invalidate makes the next use of scope's state read the store; a scope
// without an agent covers its agents too (DeleteScope removes them).
func (s *Service) invalidate(scope memory.Scope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if scope.AgentName != "" {
		if st, ok := s.scopes[scope.Key()]; ok {
			st.changes.Add(1)
		}
		return
	}
	for _, st := range s.scopes {
		if st.scope.UserID == scope.UserID {
			st.changes.Add(1)
		}
	}
}

// anyThread, as the thread of queued work, means every thread of the
// scope with pending turns (thread ids are never empty).
const anyThread = ""

// updateWork is the queue's update: one thread, or with anyThread every
// thread with pending turns, in id order.
func (s *Service) updateWork(ctx context.Context, scope memory.Scope, thread string) (*threadReport, error) {
	if thread != anyThread {
		return s.updateThread(ctx, scope, thread)
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	_, byThread := st.pending()
	st.mu.Unlock()
	threads := make([]string, 0, len(byThread))
	for t := range byThread {
		threads = append(threads, t)
	}
	slices.Sort(threads)
	rep := &threadReport{}
	for _, t := range threads {
		r, err := s.updateThread(ctx, scope, t)
		if r != nil {
			rep.merge(r.ApplyReport, r.TurnsProcessed)
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// localWrites is the Service's store: every write marks the scope's state
// to be read again, so that the Service sees its own writes at once
// rather than when their announcement comes back.
type localWrites struct {
	memory.Store
	s *Service
}

func (w localWrites) AppendTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	defer w.s.invalidate(scope)
	return w.Store.AppendTurns(ctx, scope, turns)
}

func (w localWrites) UpdateDocument(ctx context.Context, scope memory.Scope, fn func(*memory.Document) error) (*memory.Document, error) {
	defer w.s.invalidate(scope)
	return w.Store.UpdateDocument(ctx, scope, stampActor(ctx, fn))
}

func (w localWrites) DeleteScope(ctx context.Context, scope memory.Scope) error {
	defer w.s.invalidate(scope)
	return w.Store.DeleteScope(ctx, scope)
}

func (w localWrites) DeleteTurns(ctx context.Context, scope memory.Scope, match func(memory.Turn) bool) ([]memory.Turn, error) {
	defer w.s.invalidate(scope)
	return w.Store.DeleteTurns(ctx, scope, match)
}

func (w localWrites) RestoreVersion(ctx context.Context, scope memory.Scope, revision int64) (*memory.Document, error) {
	defer w.s.invalidate(scope)
	return w.Store.RestoreVersion(ctx, scope, revision)
}

func (w localWrites) ImportScope(ctx context.Context, scope memory.Scope, doc *memory.Document, turns []memory.Turn) error {
	defer w.s.invalidate(scope)
	return w.Store.ImportScope(ctx, scope, doc, turns)
}
