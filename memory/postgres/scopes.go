package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Scopes lists the scopes that hold turns or a saved document, users
// first and each user's agents after it, sorted byte-wise (as the file
// store).
func (s *Store) Scopes(ctx context.Context) ([]memory.Scope, error) {
	var out []memory.Scope
	err := s.read(ctx, func() error {
		rows, err := s.pool.Query(ctx, `SELECT user_id, agent_name FROM mnemo_scopes sc
			WHERE sc.document IS NOT NULL OR EXISTS (SELECT 1 FROM mnemo_turns t WHERE t.scope_id = sc.id)`)
		if err != nil {
			return err
		}
		out = out[:0]
		var sc memory.Scope
		_, err = pgx.ForEachRow(rows, []any{&sc.UserID, &sc.AgentName}, func() error {
			out = append(out, sc)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.err("list scopes", err)
	}
	slices.SortFunc(out, func(a, b memory.Scope) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.AgentName, b.AgentName))
	})
	return out, nil
}

// DeleteScope removes the scope's row — for a user scope, the rows of all
// its agents too — in one statement, and with it (ON DELETE CASCADE) its
// turns, kept versions, mid-term sessions, page index snapshot and
// vectors: all of it or nothing is committed. The statement waits for
// writers holding the rows' locks. A scope written again afterwards is a
// new row, so its Seqs start at 1.
func (s *Store) DeleteScope(ctx context.Context, scope memory.Scope) error {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return fmt.Errorf("delete scope: %w", err)
	}
	err = s.write(ctx, func() error {
		var err error
		if agent == "" {
			_, err = s.pool.Exec(ctx, `DELETE FROM mnemo_scopes WHERE user_id = $1`, user)
		} else {
			_, err = s.pool.Exec(ctx, `DELETE FROM mnemo_scopes WHERE user_id = $1 AND agent_name = $2`, user, agent)
		}
		return err
	})
	if agent == "" {
		s.docs.dropUser(user)
	} else {
		s.docs.drop(scope)
	}
	if err != nil {
		return s.err("delete scope "+scope.Key(), err)
	}
	return nil
}

// scopeID returns the id of the scope's row; with create, a missing row
// is inserted first, otherwise a missing row is 0.
func (s *Store) scopeID(ctx context.Context, scope memory.Scope, create bool) (int64, error) {
	for {
		var id int64
		err := s.pool.QueryRow(ctx, `SELECT id FROM mnemo_scopes WHERE user_id = $1 AND agent_name = $2`, scope.UserID, scope.AgentName).Scan(&id)
		if err == nil || !errors.Is(err, pgx.ErrNoRows) {
			return id, err
		}
		if !create {
			return 0, nil
		}
		// Inserted here or by someone else meanwhile: the next SELECT,
		// a new snapshot, sees it (unless deleted again).
		if _, err := s.pool.Exec(ctx, `INSERT INTO mnemo_scopes (user_id, agent_name) VALUES ($1, $2)
			ON CONFLICT (user_id, agent_name) DO NOTHING`, scope.UserID, scope.AgentName); err != nil {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}
