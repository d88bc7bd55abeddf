package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Service is the memory pipeline behind the tools: it stores turns, keeps
// per-scope indexes and answers retrieval and profile requests. It is safe
// for concurrent use.
type Service struct {
	cfg    Config
	store  Store
	tokens TokenCounter
	now    func() time.Time
	newID  func() string
	log    *slog.Logger
	llm    LLM

	newFactID func() string
	queue     *queue
	stats     llmStats
	// bgCtx carries background updates; Close cancels it after the grace.
	bgCtx    context.Context
	bgCancel context.CancelFunc

	changed []func(Scope) // WithChangeHook, OnChange; guarded by mu

	mu     sync.Mutex
	scopes map[string]*scopeState

	emb embedding // page vectors, when an embedder is configured

	midTermStore MidTermStore // mid-term sessions, when the store keeps them
	// pageStore keeps page index snapshots, when the store does.
	pageStore PageIndexStore
	// bg counts background work (snapshot saves) that Close waits for.
	bg sync.WaitGroup
}

// llmStats counts model usage, for reports and benchmarks.
type llmStats struct {
	mu                             sync.Mutex
	calls, promptTokens, outTokens int
}

func (l *llmStats) addCall(prompt, out int) {
	l.mu.Lock()
	l.calls++
	l.promptTokens += prompt
	l.outTokens += out
	l.mu.Unlock()
}

// LLMUsage is how much the updater has used the model since start.
type LLMUsage struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// LLMUsage reports the model calls and tokens used since the service started.
func (s *Service) LLMUsage() LLMUsage {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	return LLMUsage{s.stats.calls, s.stats.promptTokens, s.stats.outTokens}
}

// Option customises a Service.
type Option func(*Service)

// WithClock sets the clock used for timestamps (tests inject a fixed one).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithIDs sets the source of turn ids (tests inject a deterministic one).
func WithIDs(newID func() string) Option { return func(s *Service) { s.newID = newID } }

// WithLLM sets the language model used to extract long-term memory; without
// one, turns stay pending (stored and searchable) until one is configured.
func WithLLM(llm LLM) Option { return func(s *Service) { s.llm = llm } }

// WithFactIDs sets the source of fact ids (tests inject a deterministic one).
func WithFactIDs(newID func() string) Option { return func(s *Service) { s.newFactID = newID } }

// WithLogger sets the logger; the default discards nothing and writes to
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// NewService builds a Service over store, counting tokens with tokens.
func NewService(cfg Config, store Store, tokens TokenCounter, opts ...Option) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new service: %w", err)
	}
	s := &Service{
		cfg:    cfg,
		store:  store,
		tokens: tokens,
		now:    time.Now,
		newID:  func() string { return "turn_" + uuid.Must(uuid.NewV7()).String() },
		log:    slog.Default(),
		scopes: make(map[string]*scopeState),

		newFactID: NewFactID,
	}
	// The store's optional capabilities (ports.go).
	s.midTermStore, _ = store.(MidTermStore)
	s.pageStore, _ = store.(PageIndexStore)
	s.emb.store, _ = store.(VectorStore)
	for _, o := range opts {
		o(s)
	}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	s.queue = newQueue(queueWork{ctx: s.bgCtx, update: s.updateThread, tiers: s.runTiers, log: s.log}, time.Duration(cfg.DebounceSeconds)*time.Second, cfg.UpdateConcurrency)
	return s, nil
}

// Start reschedules the turns that were pending when the last process
// stopped (or crashed): every thread with turns above its watermark is
// queued for an update. It reads every scope's turn log, so main runs it
// in the background after the server starts answering.
func (s *Service) Start(ctx context.Context) error {
	if s.llm == nil {
		return nil
	}
	scopes, err := s.store.Scopes(ctx)
	if err != nil {
		return fmt.Errorf("list scopes: %w", err)
	}
	for _, sc := range scopes {
		st, err := s.loadedState(ctx, sc)
		if err != nil {
			s.log.Error("cannot resume pending memory updates", "scope", sc.Key(), "err", err)
			continue
		}
		_, byThread := st.pending()
		st.mu.Unlock()
		for thread, n := range byThread {
			s.log.Info("resuming pending memory update", "scope", sc.Key(), "thread", thread, "turns", n)
			s.queue.enqueue(sc, thread, Signals{})
		}
	}
	return nil
}

// Close stops taking background work, runs pending updates until ctx
// ends (the shutdown grace), and leaves the rest pending in the turn log
// for the next start.
func (s *Service) Close(ctx context.Context) {
	if s.llm != nil {
		s.queue.close(ctx)
	}
	// Background saves finish first, so the final ones are the newest.
	s.bg.Wait()
	s.flushMidTerm(context.WithoutCancel(ctx))
	s.flushPageSnapshots(ctx)
	s.bgCancel()
	s.bg.Wait()
}

// Config returns the configuration the service runs with.
func (s *Service) Config() Config { return s.cfg }

// scopeState is the in-memory view of one scope, rebuilt from the store.
type scopeState struct {
	scope Scope

	mu      sync.RWMutex
	turns   []*Turn // in Seq order; a turn's index position is its page id
	lastSeq int64
	pages   *lexical.Index
	threads map[string][]int // thread id → positions in turns, in order
	links   pageLinks        // session neighbours of pages, for ranking
	vec     pageVectors      // page embeddings, when configured
	midTerm *midTerm         // mid-term sessions; nil until the first sync

	doc      *Document
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

	tokenCache map[string]int
}

// state returns the scope's in-memory state, creating it empty.
func (s *Service) state(scope Scope) *scopeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.scopes[scope.Key()]
	if !ok {
		st = &scopeState{
			scope:      scope,
			pages:      lexical.New(lexical.Options{}),
			threads:    make(map[string][]int),
			tokenCache: make(map[string]int),
		}
		s.scopes[scope.Key()] = st
	}
	return st
}

// sync brings st up to date with the store: turns appended by any process
// since the last call and the latest memory document. The caller holds
// st.mu for writing.
// The document is loaded first: when its TurnLogEpoch says turns were
// removed from the log since st read it, sync returns errLogRewritten
// and the caller starts over on a fresh state (resync).
func (s *Service) sync(ctx context.Context, st *scopeState) error {
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
	if s.pageStore != nil && len(st.turns) == 0 && st.lastSeq == 0 {
		snap = make(chan *pageSnapshot, 1)
		go func() { snap <- s.readPageSnapshot(ctx, st.scope) }()
	}
	turns, err := s.store.ReadTurns(ctx, st.scope, st.lastSeq)
	indexed := 0
	if snap != nil {
		p := <-snap
		switch {
		case err != nil:
		case p.fits(turns, st.logEpoch):
			st.pages, indexed, st.snapPages = p.ix, p.head.Pages, p.head.Pages
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
	st.addTurns(turns, indexed)
	s.noteNewPages(st)
	s.syncMidTerm(ctx, st)
	if s.pageStore != nil && st.snapshotDue(snapshotAfter) {
		s.savePageSnapshot(st)
	}
	return nil
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
		st = s.state(st.scope)
		st.mu.Lock()
	}
}

// dropState forgets the in-memory state st, unless it was replaced already;
// the next use of the scope rebuilds it from the store.
func (s *Service) dropState(st *scopeState) {
	s.mu.Lock()
	if s.scopes[st.scope.Key()] == st {
		delete(s.scopes, st.scope.Key())
	}
	s.mu.Unlock()
}

// addTurns indexes turns that follow st.lastSeq; older ones are ignored.
// Many turns (a scope read from the start) are indexed a batch at a time,
// tokenized in parallel. The pages at positions below indexed are in the
// page index already (read from a snapshot) and are not tokenized.
func (st *scopeState) addTurns(turns []Turn, indexed int) {
	const batch = 4096
	var (
		ids   = make([]int, 0, min(len(turns), batch))
		texts = make([]string, 0, min(len(turns), batch))
	)
	st.turns = slices.Grow(st.turns, len(turns))
	for i := range turns {
		// The state points into turns rather than copying each turn to
		// a heap object of its own: one allocation for a whole log.
		t := &turns[i]
		if t.Seq <= st.lastSeq {
			continue
		}
		pos := len(st.turns)
		st.turns = append(st.turns, t)
		st.lastSeq = t.Seq
		st.threads[t.ThreadID] = append(st.threads[t.ThreadID], pos)
		if st.touched == nil {
			st.touched = make(map[string]bool)
		}
		st.touched[t.ThreadID] = true
		st.notePending(t)
		if pos < indexed {
			continue
		}
		ids, texts = append(ids, pos), append(texts, t.Text())
		if len(ids) == batch {
			st.pages.AddBatch(ids, texts)
			ids, texts = ids[:0], texts[:0]
		}
	}
	st.pages.AddBatch(ids, texts)
}

func (st *scopeState) setDocument(doc *Document) {
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
func (s *Service) loadedState(ctx context.Context, scope Scope) (*scopeState, error) {
	st := s.state(scope)
	st.mu.Lock()
	return s.resync(ctx, st)
}

// countTokens counts text with a per-scope cache, so rebuilding an injection
// text over the same items is cheap. The caller holds st.mu for writing.
func (s *Service) countTokens(st *scopeState, text string) int {
	if n, ok := st.tokenCache[text]; ok {
		return n
	}
	if len(st.tokenCache) >= 20000 {
		clear(st.tokenCache)
	}
	n := s.tokens.Count(text)
	st.tokenCache[text] = n
	return n
}

// resolveScope applies the configured default user and validates ids.
func (s *Service) resolveScope(userID, agentName string) (Scope, error) {
	if userID == "" {
		userID = s.cfg.UserID
	}
	sc := Scope{UserID: userID, AgentName: agentName}
	return sc, sc.Validate()
}

// resolveThread applies the default thread and validates the id.
func resolveThread(threadID string) (string, error) {
	if threadID == "" {
		return DefaultThreadID, nil
	}
	return threadID, ValidateID("thread_id", threadID)
}

// Preload reads and indexes a scope (its turns, page index and mid-term
// sessions) ahead of its first use; "" means the configured default user.
// A server calls it at start for the default user, so that the host's
// first retrieval finds everything loaded.
func (s *Service) Preload(ctx context.Context, userID, agentName string) error {
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return err
	}
	// The saved mid-term state is read and decoded while the turn log is.
	type midRead struct {
		saved *MidTermState
		err   error
	}
	var mid chan midRead
	if s.midTermStore != nil {
		mid = make(chan midRead, 1)
		go func() {
			saved, err := s.midTermStore.LoadMidTerm(ctx, scope)
			mid <- midRead{saved, err}
		}()
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	if st.midTerm == nil && mid != nil {
		r := <-mid
		st.midTerm = s.fitMidTerm(st, r.saved, r.err)
	}
	s.ensureMidTerm(ctx, st)
	return nil
}
