package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// Service is the memory pipeline behind the tools: it stores turns, keeps
// per-scope indexes and answers retrieval and profile requests. It is safe
// for concurrent use.
type Service struct {
	// progress, when set, is told how far long loads have come.
	progress func(stage string, done, total int)
	cfg      memory.Config
	store    memory.Store
	tokens   memory.TokenCounter
	now      func() time.Time
	newID    func() string
	log      *slog.Logger
	llm      memory.LLM

	newFactID func() string
	queue     *queue
	stats     llmStats
	usage     usageLedger // per-scope usage not yet saved (usage.go)
	relevant  relevance   // corrections retrieved, by scope (maintain.go)
	// bgCtx carries background updates; Close cancels it after the grace.
	bgCtx    context.Context
	bgCancel context.CancelFunc

	changed []func(memory.Scope) // WithChangeHook, OnChange; guarded by mu

	mu     sync.Mutex
	scopes map[string]*scopeState
	cache  scopeCache // size, eviction and freshness of scopes (scopecache.go)
	// base is the Store as given, for finding its optional capabilities;
	// store wraps it (localWrites).
	base memory.Store

	emb embedding // page vectors, when an embedder is configured

	midTermStore memory.MidTermStore // mid-term sessions, when the store keeps them
	// pageStore keeps page index snapshots, when the store does.
	pageStore memory.PageIndexStore
	// versioner says whether a watched scope changed (ports.go), when
	// the store can.
	versioner memory.ScopeVersioner
	// bg counts background work (snapshot saves) that Close waits for.
	bg sync.WaitGroup
	// watching counts the watch of the store, which ends with bgCtx.
	watching sync.WaitGroup
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

// LLMUsage reports the model calls and tokens used since the service started.
func (s *Service) LLMUsage() memory.LLMUsage {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	return memory.LLMUsage{Calls: s.stats.calls, PromptTokens: s.stats.promptTokens, CompletionTokens: s.stats.outTokens}
}

// Option customises a Service.
type Option func(*Service)

// WithClock sets the clock used for timestamps (tests inject a fixed one).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithIDs sets the source of turn ids (tests inject a deterministic one).
func WithIDs(newID func() string) Option { return func(s *Service) { s.newID = newID } }

// WithLLM sets the language model used to extract long-term memory; without
// one, turns stay pending (stored and searchable) until one is configured.
func WithLLM(llm memory.LLM) Option { return func(s *Service) { s.llm = llm } }

// WithFactIDs sets the source of fact ids (tests inject a deterministic one).
func WithFactIDs(newID func() string) Option { return func(s *Service) { s.newFactID = newID } }

// WithLogger sets the logger; the default discards nothing and writes to
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithProgress has the Service tell fn how far a long load has come:
// indexing a large turn log, or placing its exchanges in mid-term
// sessions again when midterm.json is missing. stage says which; done of
// total are done. fn is called from the loading goroutine, at most every
// progressStep items; short loads do not call it.
func WithProgress(fn func(stage string, done, total int)) Option {
	return func(s *Service) { s.progress = fn }
}

// progressStep is how many items a load does between progress calls, and
// the fewest a load must have to report at all.
const progressStep = 2000

// NewService builds a Service over store, counting tokens with tokens.
func NewService(cfg memory.Config, store memory.Store, tokens memory.TokenCounter, opts ...Option) (*Service, error) {
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

		newFactID: update.NewFactID,
	}
	s.cache.budget = int64(cfg.ScopeCacheMB) << 20
	// The store's optional capabilities (ports.go).
	s.midTermStore, _ = store.(memory.MidTermStore)
	s.pageStore, _ = store.(memory.PageIndexStore)
	s.emb.store, _ = store.(memory.VectorStore)
	s.emb.weight, s.emb.queryPrefix, s.emb.passagePrefix = cfg.EmbeddingFusionWeight, cfg.EmbeddingQueryPrefix, cfg.EmbeddingPassagePrefix
	watcher, _ := store.(memory.ScopeWatcher)
	locker, _ := store.(memory.ScopeLocker)
	if watcher != nil {
		s.versioner, _ = store.(memory.ScopeVersioner)
	}
	s.base = store
	s.store = localWrites{Store: store, s: s}
	for _, o := range opts {
		o(s)
	}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	work := queueWork{ctx: s.bgCtx, update: s.updateWork, tiers: s.runTiers, log: s.log}
	if locker != nil {
		work.lock = locker.TryLockScope
	}
	s.queue = newQueue(work, time.Duration(cfg.DebounceSeconds)*time.Second, cfg.UpdateConcurrency)
	if watcher != nil {
		s.watching.Add(1)
		go s.watch(watcher)
	}
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
			s.queue.enqueue(sc, thread, memory.Signals{})
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
	s.watching.Wait()
}

// Config returns the configuration the service runs with.
func (s *Service) Config() memory.Config { return s.cfg }

// resolveScope applies the configured default user and validates ids.
func (s *Service) resolveScope(userID, agentName string) (memory.Scope, error) {
	if userID == "" {
		userID = s.cfg.UserID
	}
	sc := memory.Scope{UserID: userID, AgentName: agentName}
	return sc, checkScope(sc)
}

// checkScope applies the id rule to a scope's user and agent, and refuses
// ids that look like credentials: the rule of every way in (the tools,
// imports, the viewer).
func checkScope(sc memory.Scope) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	if err := credentialID("user_id", sc.UserID); err != nil {
		return err
	}
	return credentialID("agent_name", sc.AgentName)
}

// resolveThread applies the default thread and validates the id.
func resolveThread(threadID string) (string, error) {
	if threadID == "" {
		return memory.DefaultThreadID, nil
	}
	if err := memory.ValidateID("thread_id", threadID); err != nil {
		return threadID, err
	}
	return threadID, credentialID("thread_id", threadID)
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
	// The saved mid-term state is read and decoded while the turn log is,
	// and fitted to the turns while the page index snapshot is still
	// being decoded (sync), or else once the scope is loaded.
	var mid *savedMidTerm
	if s.midTermStore != nil {
		mid = &savedMidTerm{done: make(chan struct{})}
		go func() {
			defer close(mid.done)
			mid.state, mid.err = s.midTermStore.LoadMidTerm(ctx, scope)
		}()
	}
	st := s.liveState(scope)
	if st.midTerm == nil {
		st.savedMid = mid
	}
	st, err = s.resync(ctx, st)
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	st.savedMid = nil
	if st.midTerm == nil && mid != nil {
		if saved, err, ok := mid.take(); ok {
			st.midTerm = s.fitMidTerm(st, saved, err)
		}
	}
	s.ensureMidTerm(ctx, st)
	return nil
}

// Prepare builds the word tables retrieval reads (recall.Prepare), which
// the first retrieval would otherwise build: a server calls it in the
// background at start.
func Prepare() { recall.Prepare() }
