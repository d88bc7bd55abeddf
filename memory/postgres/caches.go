package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The per-scope caches: mid-term sessions, the page index snapshot and
// page vectors, each a row (or rows) keyed by the scope's id, removed with
// the scope and with any turn.
var (
	_ memory.MidTermStore   = (*Store)(nil)
	_ memory.PageIndexStore = (*Store)(nil)
	_ memory.VectorStore    = (*Store)(nil)
)

// saveScoped runs fn with the scope's id, creating its row if needed. A
// scope deleted between the two (a foreign key violation) is created
// again, as a save into a deleted directory does in the file store.
func (s *Store) saveScoped(ctx context.Context, scope memory.Scope, fn func(id int64) error) error {
	if _, _, err := scopeArgs(scope); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.write(ctx, func() error {
			id, err := s.scopeID(ctx, scope, true)
			if err != nil {
				return err
			}
			return fn(id)
		})
		var pgErr *pgconn.PgError
		if attempt < 3 && errors.As(err, &pgErr) && pgErr.Code == "23503" {
			continue
		}
		return err
	}
}

// loadScoped runs query (whose $1 and $2 are the scope's user and agent)
// and scans its one row into dest; no row is ok == false.
func (s *Store) loadScoped(ctx context.Context, scope memory.Scope, query string, dest ...any) (bool, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return false, err
	}
	err = s.read(ctx, func() error { return s.pool.QueryRow(ctx, query, user, agent).Scan(dest...) })
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// LoadMidTerm returns the scope's saved mid-term state, or nil when none
// is saved. A state that is not valid JSON is an error.
func (s *Store) LoadMidTerm(ctx context.Context, scope memory.Scope) (*memory.MidTermState, error) {
	var raw []byte
	ok, err := s.loadScoped(ctx, scope, `SELECT m.state FROM mnemo_midterm m JOIN mnemo_scopes sc ON sc.id = m.scope_id
		WHERE sc.user_id = $1 AND sc.agent_name = $2`, &raw)
	if err != nil || !ok {
		return nil, s.err("read mid-term memory of "+scope.Key(), err)
	}
	st, err := memory.DecodeMidTermState(raw)
	if err != nil {
		return nil, fmt.Errorf("decode mid-term memory of %s: %w", scope.Key(), err)
	}
	return st, nil
}

// SaveMidTerm replaces the scope's mid-term state.
func (s *Store) SaveMidTerm(ctx context.Context, scope memory.Scope, state *memory.MidTermState) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("encode mid-term memory: %w", err)
	}
	err = s.saveScoped(ctx, scope, func(id int64) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO mnemo_midterm (scope_id, state) VALUES ($1, $2)
			ON CONFLICT (scope_id) DO UPDATE SET state = EXCLUDED.state`, id, raw)
		return err
	})
	return s.err("write mid-term memory of "+scope.Key(), err)
}

// OpenPageIndex returns the scope's page index snapshot, or nil when none
// is saved.
func (s *Store) OpenPageIndex(ctx context.Context, scope memory.Scope) (io.ReadCloser, error) {
	var raw []byte
	ok, err := s.loadScoped(ctx, scope, `SELECT p.snapshot FROM mnemo_page_index p JOIN mnemo_scopes sc ON sc.id = p.scope_id
		WHERE sc.user_id = $1 AND sc.agent_name = $2`, &raw)
	if err != nil || !ok {
		return nil, s.err("read page index snapshot of "+scope.Key(), err)
	}
	return io.NopCloser(bytes.NewReader(raw)), nil
}

// SavePageIndex replaces the scope's page index snapshot with data.
func (s *Store) SavePageIndex(ctx context.Context, scope memory.Scope, data []byte) error {
	err := s.saveScoped(ctx, scope, func(id int64) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO mnemo_page_index (scope_id, snapshot) VALUES ($1, $2)
			ON CONFLICT (scope_id) DO UPDATE SET snapshot = EXCLUDED.snapshot`, id, data)
		return err
	})
	return s.err("write page index snapshot of "+scope.Key(), err)
}

// maxVectorDims bounds a stored vector, as the file store does.
const maxVectorDims = 1 << 16

// LoadVectors returns the page vectors stored for scope under model; none
// stored, or stored under another model, returns nothing. A vector whose
// bytes are not whole float32s is skipped.
func (s *Store) LoadVectors(ctx context.Context, scope memory.Scope, model string) ([]memory.PageVector, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return nil, err
	}
	var out []memory.PageVector
	err = s.read(ctx, func() error {
		rows, err := s.pool.Query(ctx, `SELECT v.turn_id, v.vector FROM mnemo_vectors v JOIN mnemo_scopes sc ON sc.id = v.scope_id
			WHERE sc.user_id = $1 AND sc.agent_name = $2 AND v.model = $3`, user, agent, model)
		if err != nil {
			return err
		}
		out = out[:0]
		var (
			id  string
			raw []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &raw}, func() error {
			if len(raw)%4 != 0 || len(raw)/4 > maxVectorDims {
				return nil
			}
			v := make([]float32, len(raw)/4)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			out = append(out, memory.PageVector{TurnID: id, Vector: v})
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.err("read vectors of "+scope.Key(), err)
	}
	return out, nil
}

// SaveVectors stores vecs for scope under model, replacing a turn's
// earlier vector; vectors stored under another model are dropped first,
// in the same transaction.
func (s *Store) SaveVectors(ctx context.Context, scope memory.Scope, model string, vecs []memory.PageVector) error {
	return s.err("write vectors of "+scope.Key(), s.storeVectors(ctx, scope, model, vecs, false))
}

// ReplaceVectors stores exactly vecs for scope under model, in one
// transaction.
func (s *Store) ReplaceVectors(ctx context.Context, scope memory.Scope, model string, vecs []memory.PageVector) error {
	return s.err("replace vectors of "+scope.Key(), s.storeVectors(ctx, scope, model, vecs, true))
}

func (s *Store) storeVectors(ctx context.Context, scope memory.Scope, model string, vecs []memory.PageVector, replace bool) error {
	// One row per turn, the last vector given for it winning: an
	// INSERT … ON CONFLICT may not touch a row twice.
	at := make(map[string]int, len(vecs))
	ids := make([]string, 0, len(vecs))
	raws := make([][]byte, 0, len(vecs))
	for _, v := range vecs {
		b := make([]byte, 0, 4*len(v.Vector))
		for _, x := range v.Vector {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		if i, ok := at[v.TurnID]; ok {
			raws[i] = b
			continue
		}
		at[v.TurnID] = len(ids)
		ids, raws = append(ids, v.TurnID), append(raws, b)
	}
	return s.saveScoped(ctx, scope, func(id int64) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			if replace {
				b.Queue(`DELETE FROM mnemo_vectors WHERE scope_id = $1`, id)
			} else {
				b.Queue(`DELETE FROM mnemo_vectors WHERE scope_id = $1 AND model <> $2`, id, model)
			}
			b.Queue(`INSERT INTO mnemo_vectors (scope_id, turn_id, model, vector)
				SELECT $1, t.turn_id, $2, t.vector FROM unnest($3::text[], $4::bytea[]) AS t (turn_id, vector)
				ON CONFLICT (scope_id, turn_id) DO UPDATE SET model = EXCLUDED.model, vector = EXCLUDED.vector`, id, model, ids, raws)
			return tx.SendBatch(ctx, b).Close()
		})
	})
}
