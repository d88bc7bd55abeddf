package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
)

var (
	_ memory.ForgettingUpdater = (*Store)(nil)
	_ memory.VersionScrubber   = (*Store)(nil)
)

// scrubVersionsSQL deletes the kept versions of scope $1 whose document
// holds any of the byte strings $2.
const scrubVersionsSQL = `DELETE FROM mnemo_versions WHERE scope_id = $1
	AND EXISTS (SELECT 1 FROM unnest($2::bytea[]) AS n WHERE position(n IN document) > 0)`

// UpdateDocumentForgetting is UpdateDocument that also deletes, in the same
// transaction, every kept version (the one this update keeps included)
// that holds one of the texts fn returns: a failure anywhere rolls back
// the forget with the deletes, and a committed forget leaves no version a
// rollback could bring the text back from.
func (s *Store) UpdateDocumentForgetting(ctx context.Context, scope memory.Scope, fn func(*memory.Document) ([]string, error)) (*memory.Document, int, error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return nil, 0, fmt.Errorf("update memory: %w", err)
	}
	if fn == nil {
		return nil, 0, fmt.Errorf("update memory of %s: no update function", scope.Key())
	}
	var (
		saved *docEntry
		n     int
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.lockScope(ctx, tx, scope, true)
		if err != nil {
			return err
		}
		var texts []string
		saved, err = s.updateLocked(ctx, tx, scope, r, func(d *memory.Document) error {
			var err error
			texts, err = fn(d)
			return err
		})
		if err != nil {
			return err
		}
		n, err = scrubLocked(ctx, tx, r.id, texts)
		return err
	})
	if err != nil {
		return nil, 0, s.err("forget in the memory of "+scope.Key(), err)
	}
	s.docs.put(saved)
	return saved.doc.Clone(), n, nil
}

// ScrubVersions deletes every kept version of the scope's document that
// holds any of texts, in one statement under the scope's row lock, and
// returns how many it deleted. A scope with no row has none.
func (s *Store) ScrubVersions(ctx context.Context, scope memory.Scope, texts []string) (int, error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return 0, fmt.Errorf("scrub memory versions: %w", err)
	}
	if len(memory.ForgottenNeedles(texts)) == 0 {
		return 0, nil
	}
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.lockScope(ctx, tx, scope, false)
		if err != nil || r == nil {
			return err
		}
		n, err = scrubLocked(ctx, tx, r.id, texts)
		return err
	})
	if err != nil {
		return 0, s.err("scrub memory versions of "+scope.Key(), err)
	}
	return n, nil
}

// scrubLocked deletes the versions of scope row id that hold one of texts,
// in tx.
func scrubLocked(ctx context.Context, tx pgx.Tx, id int64, texts []string) (int, error) {
	needles := memory.ForgottenNeedles(texts)
	if len(needles) == 0 {
		return 0, nil
	}
	tag, err := tx.Exec(ctx, scrubVersionsSQL, id, needles)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
