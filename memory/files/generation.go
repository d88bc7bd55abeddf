package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A scope's generation is a random token kept in its .lock file. It is
// written by the first lock of a new scope directory and replaced by every
// DeleteTurns, so a scope that was deleted (and perhaps created again) or
// had turns removed has another generation than before. A Store remembers
// the generation under which it first read or wrote the scope's turns
// (scopeFiles.loaded), and refuses to save a cache — page index snapshot,
// mid-term state, vectors — derived under another one: a process that had
// the scope loaded when another forgot part of it cannot write the
// forgotten text back. Reading the log from the start (ReadTurns after 0),
// as a fresh load does, adopts the current generation.
const generationLen = 32 // hex characters

// ErrStale is wrapped by the error of a cache save (SavePageIndex,
// SaveMidTerm, SaveVectors, ReplaceVectors) refused because the scope's
// turns were removed, or the scope deleted, since this Store read them:
// the cache may hold forgotten text. Reading the scope again from the
// start (ReadTurns with after 0) makes saves possible again.
// It is memory.ErrStale, so that the Service recognises it.
var ErrStale = memory.ErrStale

// errNoScope means the scope has no directory. For a cache save it is
// stale too (the scope was deleted), so it wraps ErrStale.
var errNoScope = fmt.Errorf("the scope holds nothing (deleted?); not creating it for a cache: %w", ErrStale)

func newGeneration() []byte {
	var b [generationLen / 2]byte
	rand.Read(b[:])
	return []byte(hex.EncodeToString(b[:]))
}

// readGeneration returns the token in the lock file f; "" if none.
func readGeneration(f io.ReaderAt) (string, error) {
	var b [generationLen]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read scope generation: %w", err)
	}
	if n < generationLen {
		return "", nil
	}
	return string(b[:]), nil
}

// ensureGeneration writes a token into the lock file f, which the caller
// has locked, when it holds none (a new scope, or one written by an older
// mnemo), and returns the token.
func ensureGeneration(f interface {
	io.ReaderAt
	io.WriterAt
}) (string, error) {
	g, err := readGeneration(f)
	if err != nil || g != "" {
		return g, err
	}
	b := newGeneration()
	if _, err := f.WriteAt(b, 0); err != nil {
		return "", fmt.Errorf("write scope generation: %w", err)
	}
	return string(b), nil
}

// newGenerationLocked gives the scope a new generation. The caller holds
// the scope lock.
func newGenerationLocked(st *scopeFiles) error {
	b := newGeneration()
	if _, err := st.lockFile.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write scope generation: %w", err)
	}
	st.gen = string(b)
	return nil
}

// observe records the scope's generation as the one its turns are read
// under: always when reload (a read from the start), otherwise only when
// none is recorded yet. It reads the .lock file without locking it (reads
// must work on a read-only file system); a token torn by a concurrent
// DeleteTurns differs from every real one, so it only refuses saves.
func (s *Store) observe(st *scopeFiles, reload bool) error {
	st.mu.Lock()
	have := st.loaded != ""
	st.mu.Unlock()
	if have && !reload {
		return nil
	}
	g := ""
	f, err := s.openIn(st, lockName, os.O_RDONLY, 0)
	switch {
	case err == nil:
		g, err = readGeneration(f)
		f.Close()
		if err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	st.mu.Lock()
	st.observed = true
	if reload || st.loaded == "" {
		st.loaded = g
	}
	st.mu.Unlock()
	return nil
}

// adoptLocked records the current generation when none is recorded; the
// caller holds the scope lock.
func (s *Store) adoptLocked(st *scopeFiles) error {
	g := st.gen
	st.mu.Lock()
	st.observed = true
	if st.loaded == "" {
		st.loaded = g
	}
	st.mu.Unlock()
	return nil
}

// lockCache takes the scope lock for saving a cache. Once this Store has
// read or written the scope's turns, the scope directory must exist (a
// cache never recreates a deleted scope) and its generation must be the
// one recorded (see observe); with none recorded, the current one is
// adopted.
func (s *Store) lockCache(ctx context.Context, st *scopeFiles) error {
	st.mu.Lock()
	observed := st.observed
	st.mu.Unlock()
	lock := s.lock
	if observed {
		lock = s.lockExisting
	}
	if err := lock(ctx, st); err != nil {
		return err
	}
	var err error
	st.mu.Lock()
	st.observed = true
	if st.loaded == "" {
		st.loaded = st.gen
	} else if st.loaded != st.gen {
		err = fmt.Errorf("%s: %w", filepath.ToSlash(st.rel), ErrStale)
	}
	st.mu.Unlock()
	if err != nil {
		s.unlock(st)
		return err
	}
	return nil
}

// cacheState is state for a cache operation on scope.
func (s *Store) cacheState(ctx context.Context, scope memory.Scope) (*scopeFiles, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.state(scope)
}
