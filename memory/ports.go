package memory

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store keeps turn logs and memory documents durably. One implementation
// per backend: memory/files (the default) and memory/postgres; each
// passes the contract tests of memory/storetest. Every method is safe for
// concurrent use by several goroutines and by several processes sharing
// the same storage.
type Store interface {
	// AppendTurns appends turns to the scope's turn log, assigning each the
	// next sequence number (Seq) under the scope's cross-process lock, and
	// returns them with Seq set. It returns only once the turns are durable
	// (fsynced); on error none of them is acknowledged as stored. The cost
	// does not grow with the length of the log. A store may check the
	// turns' IdempotencyKey in the append itself: when turns of the same
	// thread are stored under it, it returns those and stores nothing.
	AppendTurns(ctx context.Context, scope Scope, turns []Turn) ([]Turn, error)

	// ReadTurns returns the scope's turns with Seq > after, in Seq order,
	// including those appended by other processes. A scope with no log
	// yields no turns and no error. Reading only what is new since the last
	// call must not re-read the whole log.
	ReadTurns(ctx context.Context, scope Scope, after int64) ([]Turn, error)

	// LoadDocument returns the scope's memory document, or a NewDocument
	// when none was saved yet. The caller owns the returned value. It
	// reflects saves made by other processes.
	LoadDocument(ctx context.Context, scope Scope) (*Document, error)

	// UpdateDocument runs fn on the latest document under the scope's
	// cross-process lock and, if fn returns nil, saves the result
	// atomically with Revision incremented and LastUpdated set, and
	// returns it. If fn or the save fails, the stored document is left as
	// it was and the error is returned (wrapped).
	UpdateDocument(ctx context.Context, scope Scope, fn func(*Document) error) (*Document, error)

	// Scopes lists every scope that has stored data.
	Scopes(ctx context.Context) ([]Scope, error)

	// DeleteScope removes everything stored for scope — turn log, memory
	// document, its versions and any index or cache the store keeps —
	// under the scope's cross-process lock. A scope without an agent is
	// the whole user: the user's agent scopes are removed with it. No
	// other user's data is touched. Deleting a scope that holds nothing is
	// not an error. After it returns, the scope reads as empty and new
	// turns start again at Seq 1.
	DeleteScope(ctx context.Context, scope Scope) error

	// ListVersions returns the earlier memory documents kept for undo,
	// newest first: each UpdateDocument that replaces a document keeps the
	// one it replaced, up to the store's configured number of versions.
	ListVersions(ctx context.Context, scope Scope) ([]Version, error)

	// RestoreVersion makes the kept version with the given Revision the
	// current document, as an UpdateDocument would (so the document it
	// replaces is kept as a version too, and the restore can be undone).
	// The restored document gets the next Revision; its watermarks are
	// the later of the two per thread, so turns already processed are not
	// sent to the updater again. A revision that is not kept is an error
	// wrapping ErrNotFound.
	RestoreVersion(ctx context.Context, scope Scope, revision int64) (*Document, error)

	// DeleteTurns removes the turns of scope for which match returns true,
	// under the scope's cross-process lock, and returns them in Seq order.
	// The turns left keep their Seq, and later appends never reuse a Seq
	// that is still in the log. In the same locked operation the scope's
	// document gets TurnLogEpoch incremented (so readers in any process
	// re-read the log), watermarks of threads left without turns are
	// dropped and the others are lowered to the last Seq left in the log,
	// so a new turn is never taken as already processed. The log is
	// replaced atomically; any index or cache of the removed turns is
	// dropped. Nothing matching is not an error and changes nothing.
	DeleteTurns(ctx context.Context, scope Scope, match func(Turn) bool) ([]Turn, error)

	// ImportScope writes doc and turns into an empty scope exactly as
	// given — Seq, ids, times, Revision and watermarks included — for a
	// lossless import. Turns must have increasing Seq > 0. A scope that
	// already holds turns or a saved document is refused with an error
	// wrapping ErrInvalidInput, as are turns out of order.
	ImportScope(ctx context.Context, scope Scope, doc *Document, turns []Turn) error

	// Close releases the store's resources.
	Close() error
}

// Version describes one earlier memory document kept for undo.
type Version struct {
	// Revision is the Revision of the kept document.
	Revision int64 `json:"revision"`
	// Saved is when that document was saved (its LastUpdated).
	Saved time.Time `json:"saved"`
	// Facts is how many facts it holds.
	Facts int `json:"facts"`
}

// ErrLLMUnavailable marks a failure of the language model endpoint that may
// pass (rate limit, outage, timeout); the work stays pending and is retried.
var ErrLLMUnavailable = errors.New("llm unavailable")

// CompletionRequest is one prompt for the language model.
type CompletionRequest struct {
	// System is the system message; may be empty.
	System string
	// Prompt is the user message.
	Prompt string
	// JSON asks for a JSON object reply where the endpoint supports it.
	JSON bool
	// MaxTokens bounds the reply; 0 means the provider's default.
	MaxTokens int
	// Retrying, when set, is told of each failed attempt the LLM is about
	// to retry within this call: why it failed (a safe, short reason), how
	// many attempts failed so far and how long until the next one. It lets
	// a caller waiting on the call report a failing endpoint at once.
	Retrying func(reason string, failed int, wait time.Duration)
}

// Completion is the model's reply with its token usage.
type Completion struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
}

// LLM is a chat model behind an OpenAI-compatible API or the host's own
// model. Complete returns the reply text; errors wrap ErrLLMUnavailable
// when retrying later may succeed, and never contain API keys or raw
// response bodies.
type LLM interface {
	Complete(ctx context.Context, req CompletionRequest) (Completion, error)
}

// Embedder turns texts into vectors with one embedding model.
type Embedder interface {
	// Embed returns one vector per text, in order, all of one length. Errors
	// wrap ErrLLMUnavailable when a later retry may succeed and never
	// contain API keys or raw response bodies.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the vectors' space (model and dimensions); vectors
	// stored under another name are not used.
	Model() string
}

// PageVector is the embedding of one stored turn.
type PageVector struct {
	TurnID string
	Vector []float32
}

// VectorStore keeps page vectors with a scope's data, so that a restart
// does not embed every turn again.
type VectorStore interface {
	// LoadVectors returns the vectors stored for scope under model. None
	// stored, or stored under another model, is not an error: it returns
	// nothing.
	LoadVectors(ctx context.Context, scope Scope, model string) ([]PageVector, error)
	// SaveVectors adds vecs to scope's stored vectors under model; vectors
	// stored under another model are dropped first.
	SaveVectors(ctx context.Context, scope Scope, model string, vecs []PageVector) error
	// ReplaceVectors stores exactly vecs for scope under model, dropping
	// every other stored vector (those of forgotten turns).
	ReplaceVectors(ctx context.Context, scope Scope, model string, vecs []PageVector) error
}

// MidTermStore keeps a scope's mid-term sessions with its data, so that
// heat and visits survive a restart. It is a cache of what the turn log
// implies: lost or unreadable state is rebuilt from the log (without the
// visit counts).
type MidTermStore interface {
	// LoadMidTerm returns the scope's saved mid-term state; nothing saved
	// returns nil and no error. An unreadable state is an error.
	LoadMidTerm(ctx context.Context, scope Scope) (*MidTermState, error)
	// SaveMidTerm replaces the scope's saved state atomically.
	SaveMidTerm(ctx context.Context, scope Scope, state *MidTermState) error
}

// PageIndexStore keeps a snapshot of a scope's page index with its data,
// so that a restart reads the index instead of tokenizing every stored
// exchange again. It is a cache: a missing, stale or damaged snapshot only
// costs indexing the turn log again.
type PageIndexStore interface {
	// OpenPageIndex opens the scope's snapshot; nothing saved returns nil
	// and no error.
	OpenPageIndex(ctx context.Context, scope Scope) (io.ReadCloser, error)
	// SavePageIndex replaces the scope's snapshot with data, atomically.
	SavePageIndex(ctx context.Context, scope Scope, data []byte) error
}

// TokenCounter counts tokens the way the host's model does (tiktoken).
// Count must be safe for concurrent use and never fail.
type TokenCounter interface {
	Count(text string) int
}

// VersionScrubber is implemented by stores that can remove from the kept
// versions (see Store.ListVersions) every one that holds a given text, so
// that forgotten text leaves no copy in undo history. The engine calls
// it after forgetting facts, with their contents.
type VersionScrubber interface {
	// ScrubVersions removes, under the scope's cross-process lock, every
	// kept version of the scope's document that contains any of texts
	// (anywhere: facts, their history, the profile), and returns how many
	// it removed. Empty texts are ignored; no versions is not an error.
	// The current document is not touched.
	ScrubVersions(ctx context.Context, scope Scope, texts []string) (int, error)
}

// ScopeWatcher is implemented by stores shared by several processes that
// can announce changes (memory/postgres, with LISTEN/NOTIFY). The engine
// watches on its own context: a scope nobody changed since it was last
// read is then served without asking the store again, and a changed one
// is read again on its next use.
type ScopeWatcher interface {
	// Watch calls changed with each scope whose turn log or document
	// changed, by any process, until ctx ends; it then returns ctx's
	// error. The zero Scope means that any scope may have changed (the
	// watch started or reconnected and may have missed announcements).
	// Announcements are hints: they may be late, merged or lost while
	// the watch is down; the revision check stays correct without them.
	Watch(ctx context.Context, changed func(Scope)) error
}

// ScopeVersioner is implemented by watched stores (ScopeWatcher) that can
// say in one cheap read whether a scope changed. An announcement arrives
// after the write's commit, late under load: a scope is served from
// memory only while its version is still the one last read, so that a
// write acknowledged by one process is seen by the next read of any other
// (two instances behind a load balancer are one service).
type ScopeVersioner interface {
	// ScopeVersion returns a value that changes with every change to
	// the scope's turn log or document, by any process, and "" for a
	// scope that holds nothing.
	ScopeVersion(ctx context.Context, scope Scope) (string, error)
}

// ScopeLocker is implemented by stores that can hold a lock per scope
// across every process sharing the storage, for as long as an update
// takes (memory/postgres: a session advisory lock on a connection of its
// own). The engine holds it around each run of the updater, so that at
// most one process asks the model about a scope at a time; the others
// leave the work to it.
type ScopeLocker interface {
	// TryLockScope takes the scope's updater lock if no process holds it
	// and returns what releases it, or ok false when another holds it.
	// An error (the storage is unreachable) takes nothing. A lock whose
	// connection is lost is released by the storage; the watermark check
	// of UpdateDocument keeps a second updater from applying turns twice.
	TryLockScope(ctx context.Context, scope Scope) (unlock func(), ok bool, err error)
}

// GroupCommitter is implemented by stores that can make one flush to
// stable storage cover the turns of several concurrent appends (group
// commit). The engine writes a call's turns with WriteTurns under its
// scope lock, releases the lock, and acknowledges the call only after
// SyncTurns returns: adds that arrive during one flush share the next.
type GroupCommitter interface {
	// WriteTurns is AppendTurns without waiting for the turns to be
	// durable: they are numbered and written (readable by this and other
	// processes) but may be lost in a crash until SyncTurns returns.
	WriteTurns(ctx context.Context, scope Scope, turns []Turn) ([]Turn, error)
	// SyncTurns returns once every turn written to scope before the call
	// is durable; one flush covers every caller waiting meanwhile. If the
	// flush fails, the turns it should have covered are cut from the log
	// again and it returns the error: they were not stored.
	SyncTurns(ctx context.Context, scope Scope) error
}
