package files

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Scopes lists the scopes that have a non-empty turn log or a saved
// document, users first and each user's agents after it, sorted. Entries
// under users/ that are not valid scope directories are ignored; a
// symbolic link where a scope directory, an agents directory, a turn log
// or a document would be is an error wrapping ErrSymlink.
func (s *Store) Scopes(ctx context.Context) ([]memory.Scope, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("list scopes in %s: %w", s.root, err)
	}
	var out []memory.Scope
	err := s.walkScopes(ctx, true, func(scope memory.Scope, rel string) error {
		has, err := s.hasData(rel)
		if has {
			out = append(out, scope)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list scopes in %s: %w", s.root, err)
	}
	slices.SortFunc(out, func(a, b memory.Scope) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.AgentName, b.AgentName))
	})
	return out, nil
}

func (s *Store) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fs.ErrClosed
	}
	return nil
}

// hasData reports whether the scope directory rel holds a non-empty turn
// log or a document.
func (s *Store) hasData(rel string) (bool, error) {
	fi, err := s.d.lstat(filepath.Join(rel, turnsName))
	switch {
	case err == nil && fi.Mode().IsRegular() && fi.Size() > 0:
		return true, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	fi, err = s.d.lstat(filepath.Join(rel, docName))
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// walkScopes calls fn for every directory under users/ whose path is a
// valid scope, whether or not it holds data, with its path relative to
// the data directory. A symbolic link in the tree of scope directories is
// an error when strict; otherwise it is logged and skipped.
func (s *Store) walkScopes(ctx context.Context, strict bool, fn func(memory.Scope, string) error) error {
	skip := func(err error) error {
		if !strict && errors.Is(err, ErrSymlink) {
			s.log.Warn("skipping a symbolic link in the data directory", "err", err)
			return nil
		}
		return err
	}
	users, err := s.readDirs(usersDir)
	if err != nil {
		return skip(err)
	}
	for _, user := range users {
		if err := ctx.Err(); err != nil {
			return err
		}
		if memory.ValidateID("user_id", user) != nil {
			continue
		}
		udir := filepath.Join(usersDir, user)
		if err := fn(memory.Scope{UserID: user}, udir); err != nil {
			if err := skip(err); err != nil {
				return err
			}
		}
		agents, err := s.readDirs(filepath.Join(udir, agentsDir))
		if err != nil {
			if err := skip(err); err != nil {
				return err
			}
			continue
		}
		for _, agent := range agents {
			if memory.ValidateID("agent_name", agent) != nil {
				continue
			}
			if err := fn(memory.Scope{UserID: user, AgentName: agent}, filepath.Join(udir, agentsDir, agent)); err != nil {
				if err := skip(err); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readDirs returns the names of the subdirectories of rel; a missing rel
// has none. A symbolic link among them, or at rel, is an error wrapping
// ErrSymlink.
func (s *Store) readDirs(rel string) ([]string, error) {
	entries, err := s.d.readDir(rel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return nil, &symlinkError{rel: filepath.Join(rel, e.Name())}
		}
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// removeStaleTemps deletes document and version temp files that a crash
// left behind.
// A scope whose lock is held is skipped: its temp file may belong to a
// save in progress in another process.
func (s *Store) removeStaleTemps() error {
	removed := 0
	err := s.walkScopes(context.Background(), false, func(scope memory.Scope, rel string) error {
		removed += s.removeTemps(scope, rel)
		return nil
	})
	if removed > 0 {
		s.log.Info("removed stale temp files", "dir", s.root, "count", removed)
	}
	return err
}

func (s *Store) removeTemps(scope memory.Scope, rel string) int {
	entries, err := s.d.readDir(rel)
	if err != nil {
		s.log.Warn("look for stale temp files", "scope", scope.Key(), "err", err)
		return 0
	}
	var stale []string
	for _, e := range entries {
		if isTempName(e.Name()) && e.Type().IsRegular() {
			stale = append(stale, e.Name())
		}
	}
	if vs, err := s.d.readDir(filepath.Join(rel, versionsDir)); err == nil {
		for _, e := range vs {
			if isVersionTemp(e.Name()) && e.Type().IsRegular() {
				stale = append(stale, filepath.Join(versionsDir, e.Name()))
			}
		}
	}
	if len(stale) == 0 {
		return 0
	}
	lf, err := s.d.open(filepath.Join(rel, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.log.Warn("open scope lock to remove stale temp files", "scope", scope.Key(), "err", err)
		return 0
	}
	defer lf.Close()
	if ok, err := tryLockFile(lf); !ok {
		s.log.Debug("scope busy; stale temp files left for a later start", "scope", scope.Key(), "err", err)
		return 0
	}
	defer unlockFile(lf)
	n := 0
	for _, name := range stale {
		if err := s.d.remove(filepath.Join(rel, name)); err != nil {
			s.log.Warn("remove stale temp file", "path", filepath.ToSlash(filepath.Join(rel, name)), "err", err)
			continue
		}
		n++
	}
	return n
}

// isTempName reports whether name is one of our document, turn log or
// mid-term temp files, ".memory.json.<random>.tmp",
// ".turns.jsonl.<random>.tmp" or ".midterm.json.<random>.tmp".
func isTempName(name string) bool {
	for _, prefix := range []string{tempPrefix, "." + turnsName + ".", "." + midTermName + "."} {
		if len(name) > len(prefix)+len(tempSuffix) &&
			strings.HasPrefix(name, prefix) && strings.HasSuffix(name, tempSuffix) {
			return true
		}
	}
	return false
}
