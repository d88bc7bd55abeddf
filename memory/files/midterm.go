package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := s.scopeDir(scope)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, midTermName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mid-term memory %s: %w", path, err)
	}
	var st memory.MidTermState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode mid-term memory %s: %w", path, err)
	}
	return &st, nil
}

// SaveMidTerm replaces the scope's mid-term state atomically (temp file,
// fsync, rename, directory fsync).
func (s *Store) SaveMidTerm(ctx context.Context, scope memory.Scope, state *memory.MidTermState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := s.scopeDir(scope)
	if err != nil {
		return err
	}
	data, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("encode mid-term memory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if _, err := writeAtomic(dir, midTermName, data); err != nil {
		return fmt.Errorf("write mid-term memory %s: %w", filepath.Join(dir, midTermName), err)
	}
	return nil
}
