package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
)

// pageIndexName is the per-scope snapshot of the page index. It is a
// cache of what the turn log implies: a missing, stale or damaged one is
// rebuilt from the log.
const pageIndexName = "pages.idx"

var _ memory.PageIndexStore = (*Store)(nil)

// OpenPageIndex opens the scope's page index snapshot, or returns nil
// when there is none.
func (s *Store) OpenPageIndex(ctx context.Context, scope memory.Scope) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := s.scopeDir(scope)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, pageIndexName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open page index snapshot: %w", err)
	}
	return f, nil
}

// SavePageIndex replaces the scope's page index snapshot with data,
// atomically (temp file, fsync, rename).
func (s *Store) SavePageIndex(ctx context.Context, scope memory.Scope, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := s.scopeDir(scope)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if _, err := writeAtomic(dir, pageIndexName, data); err != nil {
		return fmt.Errorf("write page index snapshot %s: %w", filepath.Join(dir, pageIndexName), err)
	}
	return nil
}
