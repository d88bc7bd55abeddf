package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
)

// midTermName is the per-scope sidecar of mid-term sessions (JSON). It is
// a cache of what the turn log implies, plus visit counts: losing it only
// costs rebuilding the sessions from the log.
const midTermName = "midterm.json"

var _ memory.MidTermStore = (*Store)(nil)

// LoadMidTerm returns the scope's saved mid-term state, or nil when none
// is saved. A file that is not valid JSON is an error.
func (s *Store) LoadMidTerm(ctx context.Context, scope memory.Scope) (*memory.MidTermState, error) {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(st.dir, midTermName)
	if err := s.observe(st, false); err != nil {
		return nil, fmt.Errorf("read mid-term memory %s: %w", path, err)
	}
	data, err := s.d.readFile(filepath.Join(st.rel, midTermName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mid-term memory %s: %w", path, err)
	}
	ms, err := memory.DecodeMidTermState(data)
	if err != nil {
		return nil, fmt.Errorf("decode mid-term memory %s: %w", path, err)
	}
	return ms, nil
}

// SaveMidTerm replaces the scope's mid-term state atomically (temp file,
// fsync, rename, directory fsync), under the scope lock. It never creates
// the scope's directory, and is refused with an error wrapping ErrStale
// when the scope's turns were removed since this Store read them.
func (s *Store) SaveMidTerm(ctx context.Context, scope memory.Scope, state *memory.MidTermState) error {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return err
	}
	path := filepath.Join(st.dir, midTermName)
	data, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("encode mid-term memory: %w", err)
	}
	if err := s.lockCache(ctx, st); err != nil {
		return fmt.Errorf("write mid-term memory %s: %w", path, err)
	}
	defer s.unlock(st)
	if _, err := s.d.writeAtomic(st.rel, midTermName, data); err != nil {
		return fmt.Errorf("write mid-term memory %s: %w", path, err)
	}
	return nil
}
