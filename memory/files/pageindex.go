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
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return nil, err
	}
	if err := s.observe(st, false); err != nil {
		return nil, fmt.Errorf("open page index snapshot: %w", err)
	}
	f, err := s.d.open(filepath.Join(st.rel, pageIndexName), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open page index snapshot: %w", err)
	}
	return f, nil
}

// SavePageIndex replaces the scope's page index snapshot with data,
// atomically (temp file, fsync, rename), under the scope lock. It never
// creates the scope's directory, and is refused with an error wrapping
// ErrStale when the scope's turns were removed since this Store read them.
func (s *Store) SavePageIndex(ctx context.Context, scope memory.Scope, data []byte) error {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return err
	}
	path := filepath.Join(st.dir, pageIndexName)
	if err := s.lockCache(ctx, st); err != nil {
		return fmt.Errorf("write page index snapshot %s: %w", path, err)
	}
	defer s.unlock(st)
	if _, err := s.d.writeAtomic(st.rel, pageIndexName, data); err != nil {
		return fmt.Errorf("write page index snapshot %s: %w", path, err)
	}
	return nil
}
