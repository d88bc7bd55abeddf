package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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
//
// A symbolic link anywhere in the scope's directory is an error wrapping
// ErrSymlink, and nothing is removed: a planted link must not lead to
// deleting what it points to (nor the link be taken for the scope).
func (s *Store) DeleteScope(ctx context.Context, scope memory.Scope) error {
	st, err := s.state(scope)
	if err != nil {
		return fmt.Errorf("delete scope: %w", err)
	}
	locked := []*scopeFiles{st}
	if scope.AgentName == "" {
		agents, err := s.readDirs(filepath.Join(st.rel, agentsDir))
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
	err = s.removeScopeDir(st.rel)
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

// removeScopeDir refuses a scope directory rel holding a symbolic link,
// then renames it to a tombstone, fsyncs its parent and removes the
// tombstone.
func (s *Store) removeScopeDir(rel string) error {
	links, err := s.d.links(rel)
	if err != nil {
		return err
	}
	if len(links) > 0 {
		return &symlinkError{rel: filepath.FromSlash(links[0])}
	}
	var b [8]byte
	rand.Read(b[:])
	tomb := rel + tombstoneMark + hex.EncodeToString(b[:])
	if err := s.d.rename(rel, tomb); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := s.d.syncDir(filepath.Dir(rel)); err != nil {
		return err
	}
	return s.d.removeAll(tomb)
}

// removeTombstones removes what a DeleteScope interrupted by a crash left:
// tombstone directories under users/ and users/<user>/agents/. Symbolic
// links are skipped (and logged), never followed.
func (s *Store) removeTombstones() error {
	var tombs []string
	err := s.walkTombs(func(rel string) { tombs = append(tombs, rel) })
	if err != nil {
		return err
	}
	for _, t := range tombs {
		if err := s.d.removeAll(t); err != nil {
			return fmt.Errorf("remove deleted scope %s: %w", filepath.ToSlash(t), err)
		}
		s.log.Info("removed a scope directory left by an interrupted delete", "path", filepath.ToSlash(t))
	}
	return nil
}

func (s *Store) walkTombs(fn func(rel string)) error {
	skip := func(err error) error {
		if errors.Is(err, ErrSymlink) {
			s.log.Warn("skipping a symbolic link in the data directory", "err", err)
			return nil
		}
		return err
	}
	names, err := s.readDirs(usersDir)
	if err != nil {
		return skip(err)
	}
	for _, u := range names {
		if strings.Contains(u, tombstoneMark) {
			fn(filepath.Join(usersDir, u))
			continue
		}
		agents, err := s.readDirs(filepath.Join(usersDir, u, agentsDir))
		if err != nil {
			if err := skip(err); err != nil {
				return err
			}
			continue
		}
		for _, a := range agents {
			if strings.Contains(a, tombstoneMark) {
				fn(filepath.Join(usersDir, u, agentsDir, a))
			}
		}
	}
	return nil
}
