package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// versionsDir holds a scope's earlier memory documents, one file per
// revision: memory.<revision, 12 digits>.json.
const versionsDir = "versions"

func versionName(rev int64) string { return fmt.Sprintf("memory.%012d.json", rev) }

// parseVersionName returns the revision a version file name holds.
func parseVersionName(name string) (int64, bool) {
	num, ok := strings.CutPrefix(name, "memory.")
	if !ok {
		return 0, false
	}
	if num, ok = strings.CutSuffix(num, ".json"); !ok || len(num) != 12 {
		return 0, false
	}
	rev, err := strconv.ParseInt(num, 10, 64)
	return rev, err == nil && rev > 0
}

// keepVersion saves raw, the document of revision rev that is about to be
// replaced, as a version (atomically, 0600), then removes the oldest
// versions beyond s.versions. A scope with no saved document yet (raw nil)
// has nothing to keep. The caller holds the scope lock.
func (s *Store) keepVersion(st *scopeFiles, rev int64, raw []byte) error {
	dir := filepath.Join(st.rel, versionsDir)
	if s.versions == 0 {
		if ok, err := s.d.exists(dir); err != nil || !ok {
			return err
		}
		return s.pruneVersions(dir, 0)
	}
	if raw == nil || rev <= 0 {
		return nil
	}
	if err := s.d.mkdirAll(dir); err != nil {
		return err
	}
	if _, err := s.d.writeAtomic(dir, versionName(rev), raw); err != nil {
		return err
	}
	return s.pruneVersions(dir, s.versions)
}

// pruneVersions removes all but the keep newest versions in dir
// (relative to the data directory).
func (s *Store) pruneVersions(dir string, keep int) error {
	revs, err := s.versionRevisions(dir)
	if err != nil {
		return err
	}
	if len(revs) <= keep {
		return nil
	}
	for _, rev := range revs[keep:] {
		if err := s.d.remove(filepath.Join(dir, versionName(rev))); err != nil {
			return err
		}
	}
	return s.d.syncDir(dir)
}

// versionRevisions lists the revisions kept in dir (relative to the data
// directory), newest first.
func (s *Store) versionRevisions(dir string) ([]int64, error) {
	entries, err := s.d.readDir(dir)
	if err != nil {
		return nil, err
	}
	var revs []int64
	for _, e := range entries {
		if rev, ok := parseVersionName(e.Name()); ok && e.Type().IsRegular() {
			revs = append(revs, rev)
		}
	}
	slices.Sort(revs)
	slices.Reverse(revs)
	return revs, nil
}

// ListVersions returns the versions kept in the scope's versions/
// directory, newest first. A version file that cannot be parsed is listed
// with only its revision; RestoreVersion refuses it.
func (s *Store) ListVersions(ctx context.Context, scope memory.Scope) ([]memory.Version, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	dir := filepath.Join(st.dir, versionsDir)
	rel := filepath.Join(st.rel, versionsDir)
	revs, err := s.versionRevisions(rel)
	if err != nil {
		return nil, fmt.Errorf("list versions in %s: %w", dir, err)
	}
	out := make([]memory.Version, 0, len(revs))
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("list versions in %s: %w", dir, err)
		}
		v := memory.Version{Revision: rev}
		raw, err := s.d.readFile(filepath.Join(rel, versionName(rev)))
		if err == nil {
			if d, err := memory.ParseDocument(raw); err == nil {
				v.Saved, v.Facts = d.LastUpdated, len(d.Facts)
			}
		} else if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		} else if errors.Is(err, ErrSymlink) {
			return nil, fmt.Errorf("list versions in %s: %w", dir, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// RestoreVersion replaces memory.json with the kept version of revision
// rev, through the same atomic save as UpdateDocument (so the document it
// replaces becomes a version in turn). Watermarks are the later of the
// current and the restored ones per thread.
func (s *Store) RestoreVersion(ctx context.Context, scope memory.Scope, rev int64) (*memory.Document, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("restore memory version: %w", err)
	}
	path := filepath.Join(st.dir, versionsDir, versionName(rev))
	if rev <= 0 {
		return nil, fmt.Errorf("restore memory version %d: %w", rev, memory.ErrNotFound)
	}
	if err := s.lock(ctx, st); err != nil {
		return nil, fmt.Errorf("restore memory version %s: %w", path, err)
	}
	defer s.unlock(st)
	raw, err := s.d.readFile(filepath.Join(st.rel, versionsDir, versionName(rev)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("restore memory version %d of %s: %w: it is not among the kept versions", rev, scope.Key(), memory.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("restore memory version %s: %w", path, err)
	}
	old, err := memory.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("restore memory version %s: %w", path, err)
	}
	doc, err := s.updateLocked(ctx, st, func(d *memory.Document) error {
		marks := d.Watermarks
		*d = *old.Clone()
		for thread, wm := range marks {
			if d.Watermarks == nil {
				d.Watermarks = make(map[string]int64)
			}
			d.Watermarks[thread] = max(d.Watermarks[thread], wm)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("restore memory version %s: %w", path, err)
	}
	return doc, nil
}

// isVersionTemp reports whether name is a temp file of a version save.
func isVersionTemp(name string) bool {
	return strings.HasPrefix(name, ".memory.") && strings.HasSuffix(name, tempSuffix)
}

var _ memory.VersionScrubber = (*Store)(nil)

// ScrubVersions removes every kept version of the scope's memory.json that
// contains any of texts, as written or as escaped in JSON, under the scope
// lock, and fsyncs versions/; it returns how many it removed. A version it
// cannot read stops it with an error (after the removals so far).
func (s *Store) ScrubVersions(ctx context.Context, scope memory.Scope, texts []string) (int, error) {
	st, err := s.state(scope)
	if err != nil {
		return 0, fmt.Errorf("scrub memory versions: %w", err)
	}
	dir := filepath.Join(st.dir, versionsDir)
	needles := memory.ForgottenNeedles(texts)
	if len(needles) == 0 {
		return 0, nil
	}
	if ok, err := s.d.exists(st.rel); err != nil || !ok {
		if err != nil {
			return 0, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
		}
		return 0, nil
	}
	if err := s.lockExisting(ctx, st); err != nil {
		if errors.Is(err, errNoScope) {
			return 0, nil
		}
		return 0, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
	}
	defer s.unlock(st)
	return s.scrubLocked(st, needles)
}

// scrubLocked is ScrubVersions for a caller that holds the scope lock.
func (s *Store) scrubLocked(st *scopeFiles, needles [][]byte) (int, error) {
	if len(needles) == 0 {
		return 0, nil
	}
	dir := filepath.Join(st.dir, versionsDir)
	rel := filepath.Join(st.rel, versionsDir)
	if ok, err := s.d.exists(rel); err != nil || !ok {
		if err != nil {
			return 0, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
		}
		return 0, nil
	}
	revs, err := s.versionRevisions(rel)
	if err != nil {
		return 0, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
	}
	n := 0
	for _, rev := range revs {
		name := filepath.Join(rel, versionName(rev))
		raw, err := s.d.readFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
		}
		if !slices.ContainsFunc(needles, func(b []byte) bool { return bytes.Contains(raw, b) }) {
			continue
		}
		if err := s.d.remove(name); err != nil {
			return n, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
		}
		n++
	}
	if n > 0 {
		if err := s.d.syncDir(rel); err != nil {
			return n, fmt.Errorf("scrub memory versions in %s: %w", dir, err)
		}
	}
	return n, nil
}

var _ memory.ForgettingUpdater = (*Store)(nil)

// UpdateDocumentForgetting is UpdateDocument followed, under the same
// scope lock, by the removal of every kept version that holds one of the
// texts fn returns (see memory.ForgettingUpdater).
func (s *Store) UpdateDocumentForgetting(ctx context.Context, scope memory.Scope, fn func(*memory.Document) ([]string, error)) (*memory.Document, int, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, 0, fmt.Errorf("update memory: %w", err)
	}
	if fn == nil {
		return nil, 0, fmt.Errorf("update memory %s: no update function", st.docPath)
	}
	if err := s.lock(ctx, st); err != nil {
		return nil, 0, fmt.Errorf("update memory %s: %w", st.docPath, err)
	}
	defer s.unlock(st)
	var texts []string
	next, err := s.updateLocked(ctx, st, func(d *memory.Document) error {
		texts, err = fn(d)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("update memory %s: %w", st.docPath, err)
	}
	n, err := s.scrubLocked(st, memory.ForgottenNeedles(texts))
	if err != nil {
		return nil, n, fmt.Errorf("forgotten in %s, but kept versions of it may still hold the text: %w", st.docPath, err)
	}
	return next, n, nil
}
