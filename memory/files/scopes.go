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
// under users/ that are not valid scope directories are ignored.
func (s *Store) Scopes(ctx context.Context) ([]memory.Scope, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("list scopes in %s: %w", s.root, err)
	}
	var out []memory.Scope
	err := s.walkScopes(ctx, func(scope memory.Scope, dir string) {
		if hasData(dir) {
			out = append(out, scope)
		}
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

// hasData reports whether a scope directory holds a non-empty turn log or
// a document.
func hasData(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, turnsName)); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return true
	}
	fi, err := os.Lstat(filepath.Join(dir, docName))
	return err == nil && fi.Mode().IsRegular()
}

// walkScopes calls fn for every directory under users/ whose path is a
// valid scope, whether or not it holds data.
func (s *Store) walkScopes(ctx context.Context, fn func(memory.Scope, string)) error {
	users, err := readDirs(filepath.Join(s.root, usersDir))
	if err != nil {
		return err
	}
	for _, user := range users {
		if err := ctx.Err(); err != nil {
			return err
		}
		if memory.ValidateID("user_id", user) != nil {
			continue
		}
		udir := filepath.Join(s.root, usersDir, user)
		fn(memory.Scope{UserID: user}, udir)
		agents, err := readDirs(filepath.Join(udir, agentsDir))
		if err != nil {
			return err
		}
		for _, agent := range agents {
			if memory.ValidateID("agent_name", agent) == nil {
				fn(memory.Scope{UserID: user, AgentName: agent}, filepath.Join(udir, agentsDir, agent))
			}
		}
	}
	return nil
}

// readDirs returns the names of the subdirectories of dir; a missing dir
// has none.
func readDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
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
	err := s.walkScopes(context.Background(), func(scope memory.Scope, dir string) {
		removed += s.removeTemps(scope, dir)
	})
	if removed > 0 {
		s.log.Info("removed stale temp files", "dir", s.root, "count", removed)
	}
	return err
}

func (s *Store) removeTemps(scope memory.Scope, dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.log.Warn("look for stale temp files", "dir", dir, "err", err)
		return 0
	}
	var stale []string
	for _, e := range entries {
		if isTempName(e.Name()) && e.Type().IsRegular() {
			stale = append(stale, e.Name())
		}
	}
	if vs, err := os.ReadDir(filepath.Join(dir, versionsDir)); err == nil {
		for _, e := range vs {
			if isVersionTemp(e.Name()) && e.Type().IsRegular() {
				stale = append(stale, filepath.Join(versionsDir, e.Name()))
			}
		}
	}
	if len(stale) == 0 {
		return 0
	}
	lf, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.log.Warn("open scope lock to remove stale temp files", "dir", dir, "err", err)
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
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("remove stale temp file", "path", filepath.Join(dir, name), "err", err)
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
