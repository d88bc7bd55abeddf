package memory

import (
	"context"
	"time"
)

// Store keeps turn logs and memory documents durably. One implementation
// per backend (memory/files, memory/postgres); all pass the same contract
// tests. Every method is safe for concurrent use by several goroutines and
// by several processes sharing the same storage.
type Store interface {
	// AppendTurns appends turns to the scope's turn log, assigning each the
	// next sequence number (Seq) under the scope's cross-process lock, and
	// returns them with Seq set. It returns only once the turns are durable
	// (fsynced); on error none of them is acknowledged as stored. The cost
	// does not grow with the length of the log.
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

// VersionScrubber is implemented by stores that can remove from the kept
// versions (see Store.ListVersions) every one that holds a given text, so
// that forgotten text leaves no copy in undo history. The pipeline calls
// it after forgetting facts, with their contents.
type VersionScrubber interface {
	// ScrubVersions removes, under the scope's cross-process lock, every
	// kept version of the scope's document that contains any of texts
	// (anywhere: facts, their history, the profile), and returns how many
	// it removed. Empty texts are ignored; no versions is not an error.
	// The current document is not touched.
	ScrubVersions(ctx context.Context, scope Scope, texts []string) (int, error)
}
