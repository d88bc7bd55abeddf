package engine

import (
	"context"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
)

// Retrievals of one scope rank in parallel: each holds the scope's lock
// for reading. What ranking would otherwise fill in on the way (the
// mid-term sessions caught up with the pages, the pages' session links,
// the pending counts) is filled in first, under the write lock
// (prepareToRank); what a retrieval still writes has a small lock of its
// own (the token cache: tokenMu; the sessions' visit counts: visitMu).

// readState returns the scope's state synced with the store and ready to
// rank, locked for reading; the caller must call st.mu.RUnlock. When the
// state is current (nothing new in the store, nothing to fill in) it only
// takes the read lock, so that retrievals run in parallel; otherwise it
// syncs and prepares the state under the write lock first.
func (s *Service) readState(ctx context.Context, scope memory.Scope) (*scopeState, error) {
	synced := false
	for {
		st := s.state(scope)
		st.mu.RLock()
		if s.isLive(st) && s.readyToRank(st) && (synced || s.unchanged(ctx, st)) {
			s.noteUse(st)
			return st, nil
		}
		st.mu.RUnlock()
		st, err := s.loadedState(ctx, scope)
		if err != nil {
			return nil, err
		}
		s.prepareToRank(ctx, st)
		st.mu.Unlock()
		// The state was synced after the call began: what was stored
		// before it is in there, whatever is appended meanwhile.
		synced = true
	}
}

// isLive reports whether st is still the scope's state in the cache.
func (s *Service) isLive(st *scopeState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scopes[st.scope.Key()] == st
}

// prepareToRank fills in, under st's write lock, what ranking reads and
// would otherwise fill in itself: the mid-term sessions (loaded or
// rebuilt on first use, caught up with the pages, saved when due), the
// pages' session links and, with a model, the pending counts.
func (s *Service) prepareToRank(ctx context.Context, st *scopeState) {
	s.ensureMidTerm(ctx, st)
	st.Link()
	if s.llm != nil {
		st.pendingCounts()
	}
}

// readyToRank reports whether st, held for reading at least, needs
// nothing filled in before it is ranked (prepareToRank), and holds no
// mid-term change due to be saved.
func (s *Service) readyToRank(st *scopeState) bool {
	m := st.midTerm
	if m == nil || !m.CaughtUp || len(st.touched) > 0 || !st.Linked() || !st.docReady {
		return false
	}
	if s.llm != nil && (!st.pend.ok || st.pend.rev != st.docRev) {
		return false
	}
	st.visitMu.Lock()
	saveDue := m.Dirty && s.midTermStore != nil && !m.Saving && time.Since(m.Saved) >= tiers.MidTermSaveEvery
	st.visitMu.Unlock()
	return !saveDue
}

// unchanged reports whether the store holds nothing that st, held for
// reading, lacks: what sync would find without changing st. On a store
// that announces changes that is st being fresh (and its version the
// one read last); on one that does not, the store is asked for its
// document's revision and any turns after st's last one.
func (s *Service) unchanged(ctx context.Context, st *scopeState) bool {
	if s.cache.watching.Load() {
		if !s.fresh(st) {
			return false
		}
		if s.versioner == nil {
			return true
		}
		v, err := s.versioner.ScopeVersion(ctx, st.scope)
		return err == nil && v == st.version
	}
	doc, err := s.store.LoadDocument(ctx, st.scope)
	if err != nil || doc.Revision != st.docRev || doc.TurnLogEpoch != st.logEpoch {
		return false
	}
	turns, err := s.store.ReadTurns(ctx, st.scope, st.lastSeq)
	return err == nil && len(turns) == 0
}
