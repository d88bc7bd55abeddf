package postgres

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
)

// docCacheSize bounds how many parsed documents a Store keeps.
const docCacheSize = 1024

// docCache keeps the last document read or written per scope, least
// recently used first out. An entry is valid while the scope row has the
// same id and revision: ids are never reused and a row's revision only
// grows, so the pair names one document.
type docCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *docEntry, most recent at the front
	byKey map[memory.Scope]*list.Element
}

type docEntry struct {
	scope   memory.Scope
	id, rev int64
	raw     []byte
	doc     *memory.Document // shared; never modified once cached
}

func newDocCache(n int) *docCache {
	return &docCache{max: n, order: list.New(), byKey: map[memory.Scope]*list.Element{}}
}

func (c *docCache) get(scope memory.Scope) *docEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[scope]; el != nil {
		c.order.MoveToFront(el)
		return el.Value.(*docEntry)
	}
	return nil
}

func (c *docCache) put(e *docEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[e.scope]; el != nil {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.byKey[e.scope] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*docEntry)
		delete(c.byKey, old.scope)
	}
}

func (c *docCache) drop(scope memory.Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[scope]; el != nil {
		c.order.Remove(el)
		delete(c.byKey, scope)
	}
}

// dropUser forgets the user's scope and those of its agents.
func (c *docCache) dropUser(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for scope, el := range c.byKey {
		if scope.UserID == user {
			c.order.Remove(el)
			delete(c.byKey, scope)
		}
	}
}

// scopeRow is a scope's row as a writer holding its lock sees it.
type scopeRow struct {
	id, lastSeq int64
	raw         []byte           // the stored document; nil when none
	doc         *memory.Document // raw parsed, or a new document; shared with the cache
}

// cachedKey returns the id and revision the cache holds for scope, or
// values no row has.
func (s *Store) cachedKey(scope memory.Scope) (*docEntry, int64, int64) {
	if e := s.docs.get(scope); e != nil {
		return e, e.id, e.rev
	}
	return nil, -1, -1
}

// docColumns selects a row's id, last_seq and revision, and its document
// only when the cache ($3 id, $4 revision) does not hold it already.
const docColumns = `id, last_seq, revision, CASE WHEN id = $3 AND revision = $4 THEN NULL ELSE document END, document IS NULL`

// scanRow reads docColumns into a scopeRow, taking the document from the
// cache when the query left it out.
func (s *Store) scanRow(row pgx.Row, scope memory.Scope, cached *docEntry) (*scopeRow, error) {
	var (
		r       scopeRow
		rev     int64
		raw     []byte
		docNull bool
	)
	if err := row.Scan(&r.id, &r.lastSeq, &rev, &raw, &docNull); err != nil {
		return nil, err
	}
	switch {
	case docNull:
		r.doc = memory.NewDocument()
	case raw == nil && cached != nil:
		r.raw, r.doc = cached.raw, cached.doc
	default:
		doc, err := memory.ParseDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("document of %s: %w", scope.Key(), err)
		}
		r.raw, r.doc = raw, doc
		s.docs.put(&docEntry{scope: scope, id: r.id, rev: rev, raw: raw, doc: doc})
	}
	return &r, nil
}

// LoadDocument returns a copy of the scope's document, or a
// memory.NewDocument when none is saved. The parsed document is cached:
// while the scope's revision is unchanged a load is one indexed lookup
// that transfers no document. A stored document that is not valid JSON,
// or whose major version this build does not know, is an error wrapping
// memory.ErrCorrupt.
func (s *Store) LoadDocument(ctx context.Context, scope memory.Scope) (*memory.Document, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return nil, fmt.Errorf("load memory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load memory of %s: %w", scope.Key(), err)
	}
	var r *scopeRow
	err = s.read(ctx, func() error {
		cached, id, rev := s.cachedKey(scope)
		row := s.pool.QueryRow(ctx, `SELECT `+docColumns+` FROM mnemo_scopes WHERE user_id = $1 AND agent_name = $2`, user, agent, id, rev)
		var err error
		r, err = s.scanRow(row, scope, cached)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		s.docs.drop(scope)
		return memory.NewDocument(), nil
	}
	if err != nil {
		return nil, s.err("load memory of "+scope.Key(), err)
	}
	return r.doc.Clone(), nil
}

// lockScope locks the scope's row for the rest of tx and returns it. With
// create, a missing row is inserted (and the insert undone with tx);
// without, a missing row returns nil.
func (s *Store) lockScope(ctx context.Context, tx pgx.Tx, scope memory.Scope, create bool) (*scopeRow, error) {
	cached, id, rev := s.cachedKey(scope)
	var row pgx.Row
	if create {
		// DO UPDATE (not DO NOTHING) locks the row and returns it in
		// one statement, whether it was there or not.
		row = tx.QueryRow(ctx, `INSERT INTO mnemo_scopes AS sc (user_id, agent_name) VALUES ($1, $2)
			ON CONFLICT (user_id, agent_name) DO UPDATE SET user_id = EXCLUDED.user_id
			RETURNING `+docColumns, scope.UserID, scope.AgentName, id, rev)
	} else {
		row = tx.QueryRow(ctx, `SELECT `+docColumns+` FROM mnemo_scopes
			WHERE user_id = $1 AND agent_name = $2 FOR UPDATE`, scope.UserID, scope.AgentName, id, rev)
	}
	r, err := s.scanRow(row, scope, cached)
	if !create && errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// UpdateDocument runs fn on the latest document in a transaction that
// holds the scope's row lock (SELECT … FOR UPDATE, whichever instance
// asks), keeps the document it replaces as a version, saves the result
// with Revision incremented and LastUpdated set, and commits. If fn, the
// context or any statement fails, the transaction is rolled back and
// nothing changes. fn runs while the lock is held: it should be quick,
// and must not call the Store for the same scope.
func (s *Store) UpdateDocument(ctx context.Context, scope memory.Scope, fn func(*memory.Document) error) (*memory.Document, error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return nil, fmt.Errorf("update memory: %w", err)
	}
	if fn == nil {
		return nil, fmt.Errorf("update memory of %s: no update function", scope.Key())
	}
	var saved *docEntry
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.lockScope(ctx, tx, scope, true)
		if err != nil {
			return err
		}
		saved, err = s.updateLocked(ctx, tx, scope, r, fn)
		return err
	})
	if err != nil {
		return nil, s.err("update memory of "+scope.Key(), err)
	}
	s.docs.put(saved)
	return saved.doc.Clone(), nil
}

// updateLocked is UpdateDocument for a caller whose tx holds the scope's
// row r. It returns the cache entry of the saved document, to be cached
// once tx commits.
func (s *Store) updateLocked(ctx context.Context, tx pgx.Tx, scope memory.Scope, r *scopeRow, fn func(*memory.Document) error) (*docEntry, error) {
	cur := r.doc
	next, err := memory.NextRevision(ctx, cur, fn, s.now())
	if err != nil {
		return nil, err
	}
	raw, err := encodeDocument(next)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	if s.versions > 0 && r.raw != nil && cur.Revision > 0 {
		b.Queue(`INSERT INTO mnemo_versions (scope_id, revision, document) VALUES ($1, $2, $3)
			ON CONFLICT (scope_id, revision) DO NOTHING`, r.id, cur.Revision, r.raw)
	}
	b.Queue(`DELETE FROM mnemo_versions WHERE scope_id = $1 AND revision NOT IN (
		SELECT revision FROM mnemo_versions WHERE scope_id = $1 ORDER BY revision DESC LIMIT $2)`, r.id, s.versions)
	b.Queue(`UPDATE mnemo_scopes SET revision = $2, document = $3 WHERE id = $1`, r.id, next.Revision, raw)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return &docEntry{scope: scope, id: r.id, rev: next.Revision, raw: raw, doc: next.Clone()}, nil
}

// ListVersions returns the kept versions of the scope's document, newest
// first. A version that cannot be parsed is listed with only its
// revision; RestoreVersion refuses it.
func (s *Store) ListVersions(ctx context.Context, scope memory.Scope) ([]memory.Version, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	var out []memory.Version
	err = s.read(ctx, func() error {
		rows, err := s.pool.Query(ctx, `SELECT v.revision, v.document FROM mnemo_versions v
			JOIN mnemo_scopes sc ON sc.id = v.scope_id
			WHERE sc.user_id = $1 AND sc.agent_name = $2 ORDER BY v.revision DESC`, user, agent)
		if err != nil {
			return err
		}
		out = out[:0]
		var (
			rev int64
			raw []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&rev, &raw}, func() error {
			v := memory.Version{Revision: rev}
			if d, err := memory.ParseDocument(raw); err == nil {
				v.Saved, v.Facts = d.LastUpdated, len(d.Facts)
			}
			out = append(out, v)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.err("list versions of "+scope.Key(), err)
	}
	if out == nil {
		out = []memory.Version{}
	}
	return out, nil
}

// RestoreVersion makes the kept version rev the current document, through
// the same locked update as UpdateDocument (so the document it replaces
// is kept in turn). Watermarks are the later of the current and the
// restored ones per thread. A revision not kept is an error wrapping
// memory.ErrNotFound.
func (s *Store) RestoreVersion(ctx context.Context, scope memory.Scope, rev int64) (*memory.Document, error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return nil, fmt.Errorf("restore memory version: %w", err)
	}
	notKept := fmt.Errorf("restore memory version %d of %s: %w: it is not among the kept versions", rev, scope.Key(), memory.ErrNotFound)
	if rev <= 0 {
		return nil, notKept
	}
	var saved *docEntry
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.lockScope(ctx, tx, scope, false)
		if err != nil || r == nil {
			return errors.Join(err, errNotKept)
		}
		var raw []byte
		err = tx.QueryRow(ctx, `SELECT document FROM mnemo_versions WHERE scope_id = $1 AND revision = $2`, r.id, rev).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNotKept
		}
		if err != nil {
			return err
		}
		old, err := memory.ParseDocument(raw)
		if err != nil {
			return fmt.Errorf("version %d: %w", rev, err)
		}
		saved, err = s.updateLocked(ctx, tx, scope, r, func(d *memory.Document) error {
			marks := d.Watermarks
			*d = *old.Clone()
			for thread, wm := range marks {
				if d.Watermarks == nil {
					d.Watermarks = make(map[string]int64)
				}
				d.Watermarks[thread] = max(d.Watermarks[thread], wm)
			}
			return nil
		})
		return err
	})
	if errors.Is(err, errNotKept) {
		return nil, notKept
	}
	if err != nil {
		return nil, s.err(fmt.Sprintf("restore memory version %d of %s", rev, scope.Key()), err)
	}
	s.docs.put(saved)
	return saved.doc.Clone(), nil
}

var errNotKept = errors.New("version not kept")

// encodeDocument renders d as compact JSON, leaving '<', '>' and '&'
// readable.
func encodeDocument(d *memory.Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
