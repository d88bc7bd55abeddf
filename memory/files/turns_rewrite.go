package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
)

// DeleteTurns rewrites the scope's turns.jsonl without the matching turns,
// under the scope lock: the lines kept are written to a temp file, which
// is fsynced and renamed over the log, and the directory is fsynced. The
// log is replaced before the document: a process that sees the new
// TurnLogEpoch re-reads a log that is already the new one. Checkpoints of
// the old log and the open append handle are dropped (the new log is a
// new file), and so are the scope's pages.idx, vectors.bin and
// midterm.json, caches that may hold the removed text and are rebuilt
// from the log on demand; the scope gets a new generation, so that no
// Store that read the old log saves those caches again (see ErrStale).
// A torn last line (a write that never completed) is not kept.
func (s *Store) DeleteTurns(ctx context.Context, scope memory.Scope, match func(memory.Turn) bool) ([]memory.Turn, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("delete turns: %w", err)
	}
	path := st.turnsPath
	if match == nil {
		return nil, fmt.Errorf("delete turns from %s: no match function", path)
	}
	if err := s.lock(ctx, st); err != nil {
		return nil, fmt.Errorf("delete turns from %s: %w", path, err)
	}
	defer s.unlock(st)
	removed, err := s.deleteTurnsLocked(ctx, st, match)
	if err != nil {
		return nil, fmt.Errorf("delete turns from %s: %w", path, err)
	}
	return removed, nil
}

func (s *Store) deleteTurnsLocked(ctx context.Context, st *scopeFiles, match func(memory.Turn) bool) ([]memory.Turn, error) {
	all, err := s.readTurns(ctx, st, st.turnsPath, 0)
	if err != nil {
		return nil, err
	}
	var kept, removed []memory.Turn
	for _, t := range all {
		if match(t) {
			removed = append(removed, t)
		} else {
			kept = append(kept, t)
		}
	}
	if len(removed) == 0 {
		return []memory.Turn{}, nil
	}
	raw, err := encodeTurns(kept)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A link where a cache should be fails the call before anything is
	// changed, rather than leaving the text in its target.
	for _, name := range []string{pageIndexName, vectorsName, midTermName} {
		if err := s.d.check(filepath.Join(st.rel, name)); err != nil {
			return nil, err
		}
	}
	if err := newGenerationLocked(st); err != nil {
		return nil, err
	}
	_, werr := s.d.writeAtomic(st.rel, turnsName, raw)
	// Whatever happened, forget what this Store knew of the old file.
	s.closeWriter(st)
	st.mu.Lock()
	st.marks.reset()
	st.tornLogged = false
	st.mu.Unlock()
	if werr != nil {
		return nil, werr
	}
	cacheErr := s.removeCaches(st)

	var last int64
	left := map[string]bool{}
	for _, t := range kept {
		last = t.Seq
		left[t.ThreadID] = true
	}
	_, err = s.updateLocked(context.WithoutCancel(ctx), st, func(d *memory.Document) error {
		d.TurnLogEpoch++
		for thread, wm := range d.Watermarks {
			switch {
			case !left[thread]:
				delete(d.Watermarks, thread)
			case wm > last:
				d.Watermarks[thread] = last
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("turns removed, but the memory document was not updated: %w", err)
	}
	if cacheErr != nil {
		return nil, fmt.Errorf("turns removed, but caches that may quote them were not: %w", cacheErr)
	}
	return removed, nil
}

// removeCaches deletes the scope's page index snapshot, page vectors and
// mid-term sessions (which may quote removed text), if any, and makes
// the removal durable. The caller holds the scope lock.
func (s *Store) removeCaches(st *scopeFiles) error {
	var errs []error
	for _, name := range []string{pageIndexName, vectorsName, midTermName} {
		errs = append(errs, s.d.remove(filepath.Join(st.rel, name)))
	}
	errs = append(errs, s.d.syncDir(st.rel))
	return errors.Join(errs...)
}

// encodeTurns renders turns as turns.jsonl lines.
func encodeTurns(turns []memory.Turn) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range turns {
		if err := enc.Encode(&turns[i]); err != nil {
			return nil, fmt.Errorf("encode turn %s: %w", turns[i].ID, err)
		}
	}
	return buf.Bytes(), nil
}

// ImportScope writes doc as memory.json and turns as turns.jsonl of an
// empty scope, under the scope lock and each atomically (turns first, so
// a crash in between leaves turns whose watermarks are missing: they are
// processed again, never lost). The document keeps its Revision,
// LastUpdated and watermarks as given.
func (s *Store) ImportScope(ctx context.Context, scope memory.Scope, doc *memory.Document, turns []memory.Turn) error {
	st, err := s.state(scope)
	if err != nil {
		return fmt.Errorf("import scope: %w", err)
	}
	d, err := memory.ImportDocument(doc, turns)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	if err := s.lock(ctx, st); err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	defer s.unlock(st)
	has, err := s.hasData(st.rel)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	if has {
		return fmt.Errorf("import scope %s: %w", scope.Key(), &memory.InputError{Field: "scope",
			Message: fmt.Sprintf("%s already holds memory; import into an empty scope, or forget it first", scope.Key())})
	}
	if len(turns) > 0 {
		raw, err := encodeTurns(turns)
		if err != nil {
			return fmt.Errorf("import scope %s: %w", scope.Key(), err)
		}
		_, err = s.d.writeAtomic(st.rel, turnsName, raw)
		s.closeWriter(st)
		st.mu.Lock()
		st.marks.reset()
		st.mu.Unlock()
		if err != nil {
			return fmt.Errorf("import scope %s: write turns: %w", scope.Key(), err)
		}
	}
	raw, err := encodeDocument(d)
	if err != nil {
		return fmt.Errorf("import scope %s: %w", scope.Key(), err)
	}
	fi, err := s.d.writeAtomic(st.rel, docName, raw)
	if fi != nil {
		st.setDoc(&docCache{fi: fi, raw: raw, doc: d, racy: true})
	}
	if err != nil {
		return fmt.Errorf("import scope %s: write memory: %w", scope.Key(), err)
	}
	return nil
}
