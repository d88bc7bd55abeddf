package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// tombstoneMark is in the name a deleted scope directory is renamed to
// before it is removed. '~' is not allowed in ids, so a tombstone is
// never taken for a scope.
const tombstoneMark = "~deleted~"

// DeleteScope removes the scope's directory (for a user scope, with every
// agent of the user) under the locks of every scope in it: the directory
// is first renamed to a tombstone in the same parent, atomically, and the
// parent fsynced, so a crash leaves either the whole scope or none of it;
// the tombstone is then removed, and Open removes any a crash left. Other
// Stores, in this process or another, notice on their next write that the
// lock file they hold open is no longer the scope's and start afresh.
func (s *Store) DeleteScope(ctx context.Context, scope memory.Scope) error {
	st, err := s.state(scope)
	if err != nil {
		return fmt.Errorf("delete scope: %w", err)
	}
	locked := []*scopeState{st}
	if scope.AgentName == "" {
		agents, err := readDirs(filepath.Join(st.dir, agentsDir))
		if err != nil {
			return fmt.Errorf("delete scope %s: %w", scope.Key(), err)
		}
		slices.Sort(agents)
		for _, a := range agents {
			if memory.ValidateID("agent_name", a) != nil {
				continue
			}
			ast, err := s.state(memory.Scope{UserID: scope.UserID, AgentName: a})
			if err != nil {
				return fmt.Errorf("delete scope %s: %w", scope.Key(), err)
			}
			locked = append(locked, ast)
		}
	}
	// Locks are taken user first, then agents in name order; every other
	// operation holds one scope lock at a time, so this cannot deadlock.
	for i, l := range locked {
		if err := s.lock(ctx, l); err != nil {
			for _, h := range locked[:i] {
				s.unlock(h)
			}
			return fmt.Errorf("delete scope %s: %w", scope.Key(), err)
		}
	}
	err = s.removeScopeDir(st.dir)
	for _, l := range slices.Backward(locked) {
		unlockFile(l.lockFile)
		s.dropFiles(l)
		<-l.sem
	}
	if err != nil {
		return fmt.Errorf("delete scope %s: %w", scope.Key(), err)
	}
	return nil
}

// removeScopeDir renames dir to a tombstone, fsyncs its parent and removes
// the tombstone.
func (s *Store) removeScopeDir(dir string) error {
	var b [8]byte
	rand.Read(b[:])
	tomb := dir + tombstoneMark + hex.EncodeToString(b[:])
	if err := os.Rename(dir, tomb); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	return os.RemoveAll(tomb)
}

// removeTombstones removes what a DeleteScope interrupted by a crash left:
// tombstone directories under users/ and users/<user>/agents/.
func (s *Store) removeTombstones() error {
	users := filepath.Join(s.root, usersDir)
	names, err := readDirs(users)
	if err != nil {
		return err
	}
	var tombs []string
	for _, u := range names {
		if strings.Contains(u, tombstoneMark) {
			tombs = append(tombs, filepath.Join(users, u))
			continue
		}
		agents, err := readDirs(filepath.Join(users, u, agentsDir))
		if err != nil {
			return err
		}
		for _, a := range agents {
			if strings.Contains(a, tombstoneMark) {
				tombs = append(tombs, filepath.Join(users, u, agentsDir, a))
			}
		}
	}
	for _, t := range tombs {
		if err := os.RemoveAll(t); err != nil {
			return fmt.Errorf("remove deleted scope %s: %w", t, err)
		}
		s.log.Info("removed a scope directory left by an interrupted delete", "path", t)
	}
	return nil
}
