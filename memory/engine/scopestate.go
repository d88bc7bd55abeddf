package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
)

// scopeState is the in-memory view of one scope, rebuilt from the store.
type scopeState struct {
	scope memory.Scope

	mu sync.RWMutex
	// Pages are what ranking and injection read: the turns, their index,
	// threads, sitting links and vectors.
	recall.Pages
	lastSeq int64
	midTerm *tiers.MidTerm // mid-term sessions; nil until the first sync
	// savedMid is the saved mid-term state Preload is reading, for the
	// first sync to fit to the turns while the page index is decoded.
	savedMid *savedMidTerm

	doc      *memory.Document
	factIdx  *lexical.Index // over doc.Facts, rebuilt when doc.Revision changes
	docRev   int64
	docReady bool
	logEpoch int64 // doc.TurnLogEpoch when the turns were first read

	// snapPages is how many pages the last page index snapshot saved or
	// read holds; snapBusy says one is being written.
	snapPages int
	snapBusy  bool

	pend pendingCache // what pending() reports, kept as turns arrive
	// touched lists the threads that got turns since the mid-term tier
	// last caught up with them.
	touched map[string]bool

	// tokenCache is countTokens' cache; retrievals running in parallel
	// under the read lock share it, so it has its own lock, tokenMu.
	tokenMu    sync.Mutex
	tokenCache map[string]int

	// visitMu guards the visit counts of the mid-term sessions (Visits,
	// Uses, LastVisit, Due, the index's Dirty) against retrievals that
	// visit them in parallel under the read lock; writers of the
	// sessions otherwise hold mu for writing.
	visitMu sync.Mutex

	// textBytes is the text held by turns, for the size estimate; size
	// is the estimate last counted in the cache (under Service.mu), used
	// the cache clock at the last use.
	textBytes int64
	size      int64
	used      atomic.Int64

	// changes counts announcements of changes to the scope (and the
	// Service's own writes); seenChanges and seenEpoch are the counts the
	// last read of the store started from, syncedAt when it ended.
	changes     atomic.Uint64
	seenChanges uint64
	seenEpoch   uint64
	syncedAt    time.Time
	// version is the store's version of the scope (ScopeVersioner)
	// read before the last read of the store, or "".
	version string

	// saveMu is held while one of the scope's caches is saved to the
	// store; retired, set under it, says the state was dropped (its turns
	// were forgotten or rewritten) and must never be saved again.
	saveMu  sync.Mutex
	retired bool

	// progress is the Service's progress report (WithProgress), or nil.
	progress func(stage string, done, total int)
}

// state returns the scope's in-memory state, creating it empty.
func (s *Service) state(scope memory.Scope) *scopeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.scopes[scope.Key()]
	if !ok {
		st = &scopeState{
			scope:      scope,
			Pages:      recall.Pages{Index: lexical.New(lexical.Options{}), Threads: make(map[string][]int)},
			tokenCache: make(map[string]int),
			progress:   s.progress,
		}
		s.scopes[scope.Key()] = st
	}
	return st
}

// sync brings st up to date with the store: turns appended by any process
// since the last call and the latest memory document. The document is loaded
// first: when its TurnLogEpoch says turns were removed from the log since st
// read it, sync returns errLogRewritten and the caller starts over on a fresh
// state (resync). On a store that can tell a scope's version, a watched
// scope is served from memory only when its version is still the one
// read last: another process's write is seen at once, not when its
// announcement arrives.
func (s *Service) sync(ctx context.Context, st *scopeState) error {
	var version string
	if s.versioner != nil && s.cache.watching.Load() {
		v, err := s.versioner.ScopeVersion(ctx, st.scope)
		if err != nil {
			return fmt.Errorf("check memory of %s for changes: %w", st.scope.Key(), err)
		}
		version = v
	}
	if s.fresh(st) && version == st.version {
		s.noteUse(st)
		return nil
	}
	changes, epoch := st.changes.Load(), s.cache.epoch.Load()
	doc, err := s.store.LoadDocument(ctx, st.scope)
	if err != nil {
		return fmt.Errorf("load memory of %s: %w", st.scope.Key(), err)
	}
	// A new epoch means turns were removed; a lower revision means the
	// scope was deleted (or replaced) by another process. Either way the
	// in-memory turns no longer match the store.
	if st.docReady && (doc.TurnLogEpoch != st.logEpoch || doc.Revision < st.docRev) {
		return errLogRewritten
	}
	if !st.docReady || doc.Revision != st.docRev {
		st.setDocument(doc)
	}
	// The first read of a scope reads the page index snapshot meanwhile,
	// if there is one.
	var snap chan *pageSnapshot
	if s.pageStore != nil && len(st.Turns) == 0 && st.lastSeq == 0 {
		snap = make(chan *pageSnapshot, 1)
		go func() { snap <- s.readPageSnapshot(ctx, st.scope) }()
	}
	turns, err := s.store.ReadTurns(ctx, st.scope, st.lastSeq)
	from := len(st.Turns)
	var refit []*memory.MidTermSession // sessions fitted that need the index
	if err == nil {
		// While the snapshot is still being decoded: the turns are
		// taken in now, and indexed once it is known which of them it
		// holds; the saved mid-term state Preload reads is fitted to
		// them, and the links ranking reads are made.
		st.takeTurns(turns)
		refit = s.fitSavedMidTerm(st)
		if snap != nil {
			st.Link()
		}
	}
	indexed := 0
	if snap != nil {
		p := <-snap
		switch {
		case err != nil:
		case p.fits(turns, st.logEpoch):
			st.Index, indexed, st.snapPages = p.ix, p.head.Pages, p.head.Pages
			s.log.Debug("page index read from its snapshot", "scope", st.scope.Key(), "pages", indexed, "to_index", len(turns)-indexed)
		case p.err != nil:
			s.log.Info("page index snapshot not used; indexing the turn log", "scope", st.scope.Key(), "err", p.err)
		case p.ix != nil:
			s.log.Info("page index snapshot does not match the turn log; indexing it", "scope", st.scope.Key())
		}
	}
	if err != nil {
		return fmt.Errorf("read turns of %s: %w", st.scope.Key(), err)
	}
	st.indexTurns(from, indexed)
	s.refitSessions(st, st.midTerm, refit)
	s.noteNewPages(st)
	s.syncMidTerm(ctx, st)
	if s.pageStore != nil && st.backgroundSnapshotDue() {
		s.savePageSnapshot(st)
	}
	st.seenChanges, st.seenEpoch, st.syncedAt, st.version = changes, epoch, time.Now(), version
	s.noteUse(st)
	return nil
}

// appended adds to st the turns this process has just appended, when
// they directly follow st's last turn: no other process appended between
// st's sync and them, so st is up to date without reading the log back
// (a round trip, two on PostgreSQL). It reports whether it added them;
// if not, the caller syncs st. The caller holds st.mu for writing, over
// a state synced before the append.
func (s *Service) appended(ctx context.Context, st *scopeState, turns []memory.Turn) bool {
	if len(turns) == 0 || turns[0].Seq != st.lastSeq+1 {
		return false
	}
	for i := 1; i < len(turns); i++ {
		if turns[i].Seq != turns[i-1].Seq+1 {
			return false
		}
	}
	st.addTurns(turns)
	s.noteNewPages(st)
	s.syncMidTerm(ctx, st)
	// Linked here, a retrieval that follows ranks under the read lock
	// without taking the write lock first (readState).
	st.Link()
	if s.pageStore != nil && st.backgroundSnapshotDue() {
		s.savePageSnapshot(st)
	}
	s.noteUse(st)
	return true
}

// errLogRewritten means turns were removed from the scope's log since the
// in-memory state read it.
var errLogRewritten = errors.New("turn log rewritten")

// resync syncs st, which the caller holds locked for writing. When the
// log was rewritten, st is dropped and a fresh state is built from the
// store. It returns the synced state, locked for writing, or an error
// with nothing locked.
func (s *Service) resync(ctx context.Context, st *scopeState) (*scopeState, error) {
	for {
		err := s.sync(ctx, st)
		if err == nil {
			return st, nil
		}
		st.mu.Unlock()
		if !errors.Is(err, errLogRewritten) {
			return nil, err
		}
		s.dropState(st)
		st = s.liveState(st.scope)
	}
}

// dropState forgets the in-memory state st, unless it was replaced already;
// the next use of the scope rebuilds it from the store. st is retired: a
// cache save of it that has not started yet never runs, and one that is
// running is waited for.
func (s *Service) dropState(st *scopeState) {
	st.saveMu.Lock()
	st.retired = true
	st.saveMu.Unlock()
	s.unlistState(st)
}

// unlistState removes st from the scopes of the Service, unless it was
// replaced already.
func (s *Service) unlistState(st *scopeState) {
	s.mu.Lock()
	s.removeStateLocked(st)
	s.mu.Unlock()
}

// liveState returns the scope's state locked for writing, making sure it
// is still the one in the cache: a state evicted or dropped between
// s.state and its lock is left alone.
func (s *Service) liveState(scope memory.Scope) *scopeState {
	for {
		st := s.state(scope)
		st.mu.Lock()
		s.mu.Lock()
		live := s.scopes[scope.Key()] == st
		s.mu.Unlock()
		if live {
			return st
		}
		st.mu.Unlock()
	}
}

// addTurns adds turns that follow st.lastSeq and indexes them; older
// ones are ignored.
func (st *scopeState) addTurns(turns []memory.Turn) {
	from := len(st.Turns)
	st.takeTurns(turns)
	st.indexTurns(from, from)
}

// takeTurns adds turns that follow st.lastSeq to st's pages, threads and
// pending counts, without indexing them (indexTurns does); older ones are
// ignored.
func (st *scopeState) takeTurns(turns []memory.Turn) {
	st.Turns = slices.Grow(st.Turns, len(turns))
	if st.touched == nil {
		st.touched = make(map[string]bool)
	}
	// A run of turns of one thread, as a log mostly is, looks its thread
	// up once.
	for i := 0; i < len(turns); {
		thread := turns[i].ThreadID
		positions, added := st.Threads[thread], false
		for ; i < len(turns) && turns[i].ThreadID == thread; i++ {
			// The state points into turns rather than copying each turn
			// to a heap object of its own: one allocation for a whole log.
			t := &turns[i]
			if t.Seq <= st.lastSeq {
				continue
			}
			positions = append(positions, len(st.Turns))
			st.Turns = append(st.Turns, t)
			st.lastSeq, added = t.Seq, true
			st.notePending(t)
			st.textBytes += int64(len(t.User) + len(t.Reply) + len(t.MetaData) + len(t.ID) + len(t.ThreadID))
		}
		if added {
			st.Threads[thread] = positions
			st.touched[thread] = true
		}
	}
}

// indexTurns indexes the pages from position from on, but for those below
// indexed, which the page index holds already (read from a snapshot).
// Many (a scope read from the start) are indexed a batch at a time,
// tokenized in parallel.
func (st *scopeState) indexTurns(from, indexed int) {
	const batch = 4096
	first := max(from, indexed)
	total := len(st.Turns) - first
	if total <= 0 {
		return
	}
	report := st.progress != nil && total >= progressStep
	ids := make([]int, 0, min(total, batch))
	texts := make([]string, 0, min(total, batch))
	heads := make([]int, 0, min(total, batch))
	done := 0
	for pos := first; pos < len(st.Turns); pos++ {
		// The user's words are the page's first field (Text puts them
		// first), for BM25F; a dialogue's slice has none.
		t := st.Turns[pos]
		ids, texts, heads = append(ids, pos), append(texts, t.Text()), append(heads, recall.PageFields(t.User, t.Reply))
		if len(ids) == batch {
			st.Index.AddFields(ids, texts, heads)
			ids, texts, heads = ids[:0], texts[:0], heads[:0]
			done += batch
			if report {
				st.progress(stageIndex, done, total)
			}
		}
	}
	st.Index.AddFields(ids, texts, heads)
	if report {
		st.progress(stageIndex, total, total)
	}
}

// Stages of a long load, as WithProgress reports them.
const (
	stageIndex    = "indexing exchanges"
	stageSessions = "placing exchanges in topic sessions"
)

func (st *scopeState) setDocument(doc *memory.Document) {
	if !st.docReady {
		st.logEpoch = doc.TurnLogEpoch
	}
	st.doc = doc
	st.docRev = doc.Revision
	st.docReady = true
	st.factIdx = lexical.New(lexical.Options{})
	for i, f := range doc.Facts {
		st.factIdx.Add(i, f.Content)
	}
}

// loadedState returns the scope's state synced with the store, locked for
// writing; the caller must call st.mu.Unlock.
func (s *Service) loadedState(ctx context.Context, scope memory.Scope) (*scopeState, error) {
	return s.resync(ctx, s.liveState(scope))
}

// tokenCounter is countTokens for st as a function of the text alone.
func (s *Service) tokenCounter(st *scopeState) func(string) int {
	return func(text string) int { return s.countTokens(st, text) }
}

// countTokens counts text with a per-scope cache, so rebuilding an injection
// text over the same items is cheap.
func (s *Service) countTokens(st *scopeState, text string) int {
	st.tokenMu.Lock()
	n, ok := st.tokenCache[text]
	st.tokenMu.Unlock()
	if ok {
		return n
	}
	// Counted outside the lock: two retrievals that count one text at
	// once both count it, and store the same number.
	n = s.tokens.Count(text)
	st.tokenMu.Lock()
	if len(st.tokenCache) >= 20000 {
		clear(st.tokenCache)
	}
	st.tokenCache[text] = n
	st.tokenMu.Unlock()
	return n
}

// saveCache runs save, which writes one of st's caches (page index
// snapshot, mid-term state, vectors) to the store, unless st is retired.
// A save the store refuses with ErrStale — the scope's turns were
// forgotten, or the scope deleted, by another call or process since st
// read them — is expected: st is retired and dropped, so the next use of
// the scope reads it again, and it is logged at debug level only. It
// reports whether save ran and succeeded, and any other error.
func (s *Service) saveCache(st *scopeState, what string, save func() error) (bool, error) {
	st.saveMu.Lock()
	defer st.saveMu.Unlock()
	if st.retired {
		return false, nil
	}
	err := save()
	if errors.Is(err, memory.ErrStale) {
		st.retired = true
		s.unlistState(st)
		s.log.Debug("scope changed since it was read; its "+what+" is not saved and it is read again at its next use", "scope", st.scope.Key(), "err", err)
		return false, nil
	}
	return err == nil, err
}
