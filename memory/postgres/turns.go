package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mnemo-mcp/mnemo/memory"
)

// appendSQL numbers and inserts turns in one statement (so one round trip
// and one implicit transaction): the upsert bumps the scope's last_seq and
// holds its row lock until commit, so concurrent appends to the scope, from
// any instance, take their numbers one after the other and commit in Seq
// order.
const appendSQL = `WITH sc AS (
	INSERT INTO mnemo_scopes AS s (user_id, agent_name, last_seq) VALUES ($1, $2, $3::bigint)
	ON CONFLICT (user_id, agent_name) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
	RETURNING id, last_seq - $3::bigint AS base
)
INSERT INTO mnemo_turns (scope_id, seq, turn_id, thread_id, body, idempotency_key)
SELECT sc.id, sc.base + t.n, t.turn_id, t.thread_id, t.body, NULLIF($7::text, '')
FROM sc, unnest($4::text[], $5::text[], $6::bytea[]) WITH ORDINALITY AS t (turn_id, thread_id, body, n)
RETURNING seq`

// lockScopeSQL creates the scope's row if needed and locks it for the
// rest of the transaction.
const lockScopeSQL = `INSERT INTO mnemo_scopes (user_id, agent_name) VALUES ($1, $2)
	ON CONFLICT (user_id, agent_name) DO UPDATE SET user_id = EXCLUDED.user_id RETURNING id`

// keyedTurnsSQL reads the turns of a thread stored under an idempotency
// key.
const keyedTurnsSQL = `SELECT seq, body FROM mnemo_turns
	WHERE scope_id = $1 AND thread_id = $2 AND idempotency_key = $3 ORDER BY seq`

// AppendTurns numbers turns after the scope's last one and inserts them,
// committed (synchronous_commit on) before it returns; the statement holds
// the scope's row lock, so Seqs are dense and unique across instances. It
// costs one round trip whatever the length of the log. Turns are returned
// as new values with Seq set. A turn whose MetaData is not valid JSON
// fails the whole call with an error wrapping memory.ErrInvalidInput; no
// turns is a no-op. Turns that carry an IdempotencyKey are appended in a
// transaction that first looks for turns of their thread stored under
// that key: when there are some, they are returned and nothing is
// stored. A connection that breaks once the append was sent is an error
// wrapping memory.ErrOutcomeUnknown as well as ErrUnavailable.
func (s *Store) AppendTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return nil, fmt.Errorf("append turns: %w", err)
	}
	for i, t := range turns {
		if len(t.MetaData) > 0 && !json.Valid(t.MetaData) {
			return nil, fmt.Errorf("append turns to %s: %w", scope.Key(),
				&memory.InputError{Field: "meta_data", Message: fmt.Sprintf("turn %d: not valid JSON", i)})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", scope.Key(), err)
	}
	if len(turns) == 0 {
		return []memory.Turn{}, nil
	}
	ids, threads, bodies, err := encodeTurns(turns)
	if err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", scope.Key(), err)
	}
	key := turns[0].IdempotencyKey
	var (
		first   int64
		already []memory.Turn
	)
	insert := func(q poolQuerier) error {
		rows, err := q.Query(ctx, appendSQL, user, agent, int64(len(turns)), ids, threads, bodies, key)
		if err != nil {
			return err
		}
		first = 0
		var seq int64
		_, err = pgx.ForEachRow(rows, []any{&seq}, func() error {
			if first == 0 || seq < first {
				first = seq
			}
			return nil
		})
		return err
	}
	if key == "" {
		err = s.write(ctx, func() error { return insert(s.pool) })
	} else {
		// The key is looked for under the scope's row lock, in the
		// transaction that appends: of two instances given the same
		// exchange (a retry after an unacknowledged commit), the second
		// finds the first's turns and stores nothing.
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			var id int64
			if err := tx.QueryRow(ctx, lockScopeSQL, user, agent).Scan(&id); err != nil {
				return err
			}
			var err error
			if already, err = queryTurns(ctx, tx, keyedTurnsSQL, id, turns[0].ThreadID, key); err != nil || len(already) > 0 {
				return err
			}
			return insert(tx)
		})
	}
	if err != nil {
		return nil, s.err("append turns to "+scope.Key(), outcome(err))
	}
	if len(already) > 0 {
		return already, nil
	}
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		t.Seq = first + int64(i)
		out[i] = t
	}
	return out, nil
}

// outcome marks err with memory.ErrOutcomeUnknown when the statement may
// have reached the server before the connection failed: the append may
// then have committed or not.
func outcome(err error) error {
	if unavailable(err) && !pgconn.SafeToRetry(err) {
		return fmt.Errorf("%w: %w", memory.ErrOutcomeUnknown, err)
	}
	return err
}

// encodeTurns returns the columns of turns: ids, thread ids and bodies
// (JSON, Seq left out as 0: the seq column holds it).
func encodeTurns(turns []memory.Turn) (ids, threads []string, bodies [][]byte, err error) {
	ids = make([]string, len(turns))
	threads = make([]string, len(turns))
	bodies = make([][]byte, len(turns))
	for i, t := range turns {
		t.Seq = 0
		b, err := encodeTurn(&t)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("encode turn %d: %w", i, err)
		}
		ids[i], threads[i], bodies[i] = t.ID, t.ThreadID, b
	}
	return ids, threads, bodies, nil
}

// readTurnsSQL reads a scope's turns after a Seq through the primary key.
const readTurnsSQL = `SELECT seq, body FROM mnemo_turns
	WHERE scope_id = (SELECT id FROM mnemo_scopes WHERE user_id = $1 AND agent_name = $2) AND seq > $3
	ORDER BY seq`

// ReadTurns returns the scope's turns with Seq > after, in Seq order: an
// index range scan, so polling for new turns reads only what is new. A
// body that does not parse is an error wrapping memory.ErrCorrupt that
// names its Seq. A long read is decoded on every CPU.
func (s *Store) ReadTurns(ctx context.Context, scope memory.Scope, after int64) ([]memory.Turn, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	var turns []memory.Turn
	err = s.read(ctx, func() error {
		turns, err = queryTurns(ctx, s.pool, readTurnsSQL, user, agent, after)
		return err
	})
	if err != nil {
		return nil, s.err("read turns of "+scope.Key(), err)
	}
	return turns, nil
}

// queryTurns runs a query selecting seq and body and decodes the turns.
func queryTurns(ctx context.Context, q poolQuerier, sql string, args ...any) ([]memory.Turn, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var (
		seqs   []int64
		bodies [][]byte
		seq    int64
		body   []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &body}, func() error {
		seqs = append(seqs, seq)
		bodies = append(bodies, body)
		body = nil // Scan reuses a non-nil slice; each row keeps its own
		return nil
	})
	if err != nil || len(seqs) == 0 {
		return nil, err
	}
	return decodeTurns(seqs, bodies)
}

// decodeBatch is how many turns one goroutine decodes at a time.
const decodeBatch = 512

// decodeTurns parses bodies, in parallel when there are many; the first
// error in Seq order is returned.
func decodeTurns(seqs []int64, bodies [][]byte) ([]memory.Turn, error) {
	out := make([]memory.Turn, len(seqs))
	decode := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := decodeTurn(bodies[i], &out[i]); err != nil {
				return fmt.Errorf("turn %d: %w: %w", seqs[i], memory.ErrCorrupt, err)
			}
			out[i].Seq = seqs[i]
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), (len(seqs)+decodeBatch-1)/decodeBatch)
	if workers <= 1 {
		if err := decode(0, len(seqs)); err != nil {
			return nil, err
		}
		return out, nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs = make([]error, (len(seqs)+decodeBatch-1)/decodeBatch)
	)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				lo := next
				next += decodeBatch
				mu.Unlock()
				if lo >= len(seqs) {
					return
				}
				errs[lo/decodeBatch] = decode(lo, min(lo+decodeBatch, len(seqs)))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteTurns removes the matching turns in one transaction that holds
// the scope's row lock: the turns are deleted, the scope's last Seq is
// lowered to the last turn left (so later appends follow it), the scope's
// mid-term sessions, page index snapshot and page vectors are dropped, and
// the document gets TurnLogEpoch incremented and its watermarks dropped or
// lowered, as an UpdateDocument would (keeping a version). Either all of
// it is committed or none.
func (s *Store) DeleteTurns(ctx context.Context, scope memory.Scope, match func(memory.Turn) bool) ([]memory.Turn, error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return nil, fmt.Errorf("delete turns: %w", err)
	}
	if match == nil {
		return nil, fmt.Errorf("delete turns of %s: no match function", scope.Key())
	}
	var (
		removed []memory.Turn
		saved   *docEntry
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		removed, saved = nil, nil
		r, err := s.lockScope(ctx, tx, scope, false)
		if err != nil || r == nil {
			return err
		}
		all, err := queryTurns(ctx, tx, `SELECT seq, body FROM mnemo_turns WHERE scope_id = $1 ORDER BY seq`, r.id)
		if err != nil {
			return err
		}
		var (
			gone []int64
			last int64
			left = map[string]bool{}
		)
		for _, t := range all {
			if match(t) {
				removed = append(removed, t)
				gone = append(gone, t.Seq)
				continue
			}
			last = t.Seq
			left[t.ThreadID] = true
		}
		if len(removed) == 0 {
			return nil
		}
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM mnemo_turns WHERE scope_id = $1 AND seq = ANY($2)`, r.id, gone)
		b.Queue(`UPDATE mnemo_scopes SET last_seq = $2 WHERE id = $1`, r.id, last)
		for _, table := range []string{"mnemo_midterm", "mnemo_page_index", "mnemo_vectors"} {
			b.Queue(`DELETE FROM `+table+` WHERE scope_id = $1`, r.id)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		saved, err = s.updateLocked(ctx, tx, scope, r, func(d *memory.Document) error {
			d.TurnLogEpoch++
			for thread, wm := range d.Watermarks {
				switch {
				case !left[thread]:
					delete(d.Watermarks, thread)
				case wm > last:
					d.Watermarks[thread] = last
				}
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.err("delete turns of "+scope.Key(), err)
	}
	if saved != nil {
		s.docs.put(saved)
	}
	if removed == nil {
		removed = []memory.Turn{}
	}
	return removed, nil
}

// ImportScope writes doc and turns into an empty scope, exactly as given
// (Seq, ids, times, Revision, LastUpdated and watermarks), in one
// transaction holding the scope's row lock. The scope's last Seq becomes
// that of the last turn. A scope that holds turns or a document is refused
// with an error wrapping memory.ErrInvalidInput, as are turns not in
// increasing Seq order, invalid meta_data and a document of an unknown
// major version.
func (s *Store) ImportScope(ctx context.Context, scope memory.Scope, doc *memory.Document, turns []memory.Turn) error {
	if _, _, err := scopeArgs(scope); err != nil {
		return fmt.Errorf("import scope: %w", err)
	}
	d, err := memory.ImportDocument(doc, turns)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	raw, err := encodeDocument(d)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	ids, threads, bodies, err := encodeTurns(turns)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	var last int64
	if len(turns) > 0 {
		last = turns[len(turns)-1].Seq
	}
	refused := &memory.InputError{Field: "scope",
		Message: fmt.Sprintf("%s already holds memory; import into an empty scope, or forget it first", scope.Key())}
	var id int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.lockScope(ctx, tx, scope, true)
		if err != nil {
			return err
		}
		var hasTurns bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mnemo_turns WHERE scope_id = $1)`, r.id).Scan(&hasTurns); err != nil {
			return err
		}
		if r.raw != nil || hasTurns {
			return refused
		}
		rows := make([][]any, len(turns))
		for i, t := range turns {
			rows[i] = []any{r.id, t.Seq, ids[i], threads[i], bodies[i]}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"mnemo_turns"}, []string{"scope_id", "seq", "turn_id", "thread_id", "body"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE mnemo_scopes SET document = $2, revision = $3, last_seq = $4 WHERE id = $1`, r.id, raw, d.Revision, last)
		id = r.id
		return err
	})
	if err != nil {
		return s.err("import scope "+scope.Key(), err)
	}
	s.docs.put(&docEntry{scope: scope, id: id, rev: d.Revision, raw: raw, doc: d})
	return nil
}
