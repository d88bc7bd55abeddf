// Package files is mnemo's default memory.Store: plain files under one data
// directory, one directory per scope.
//
// Layout, relative to the directory given to Open:
//
//	users/<user>/turns.jsonl            the user's shared turn log, one JSON memory.Turn per line
//	users/<user>/memory.json            the user's shared memory.Document, indented JSON
//	users/<user>/.lock                  the scope's cross-process lock
//	users/<user>/versions/memory.<revision>.json
//	                                    earlier memory.json files kept for undo
//	                                    (the last WithVersions, default 5)
//	users/<user>/midterm.json           the mid-term sessions (memory.MidTermStore), a cache
//	users/<user>/pages.idx              the page index snapshot (memory.PageIndexStore), a cache
//	users/<user>/vectors.bin            the page embeddings (memory.VectorStore), a cache
//	users/<user>/agents/<agent>/...     the same files for one agent of that user
//	users/<user>/.<name>.<random>.tmp   a file being replaced atomically; a stale one is removed
//	                                    when the scope is next opened
//	users/<user>~deleted~...            a scope being deleted (tombstone); removed on Open
//
// The caches hold what the turn log implies: a lost or damaged one is
// rebuilt from the log.
//
// Files are created 0600 in directories 0700. Turns are appended with one
// write and an fsync under the scope lock; the document is replaced
// atomically (temp file, fsync, rename, directory fsync). Several processes
// may share one directory: writers serialize on flock(2) of the scope's
// .lock file (see lockFile for systems without it), readers take no lock
// and notice other processes' changes with a stat.
//
// # Files
//
//	store.go, scopes.go, scopedir.go  the Store, its options, scopes and their directories
//	root.go, sys_unix.go, sys_other.go confinement to the data directory; file locks
//	turnlog.go, groupcommit.go        appending turns: one write and fsync, or grouped
//	readturns.go, checkpoints.go      reading the log, in parallel from the start, and where reads ended
//	turndecode.go, turnchunk.go       decoding a turn's line; a chunk's lines with one string for all
//	turns_rewrite.go, delete.go       removing turns (forget) and whole scopes
//	document.go, versions.go          the memory document and its kept versions
//	generation.go                     the scope's generation: no cache saved over a forget
//	midterm.go, pageindex.go, vectors.go
//	                                  the caches: mid-term state, page index snapshot, vectors
package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// File names inside a scope directory.
const (
	turnsName  = "turns.jsonl"
	docName    = "memory.json"
	lockName   = ".lock"
	usersDir   = "users"
	agentsDir  = "agents"
	tempPrefix = "." + docName + "."
	tempSuffix = ".tmp"
)

var _ memory.Store = (*Store)(nil)

// Store is a memory.Store kept in files under one directory. It is safe for
// concurrent use by several goroutines, and by several processes that open
// the same directory.
type Store struct {
	root string
	d    *dataDir // every file operation goes through it
	now  func() time.Time
	log  *slog.Logger

	mu         sync.Mutex
	scopes     map[memory.Scope]*scopeFiles
	closed     bool
	tick       uint64 // counts scope uses, for least-recently-used order
	openScopes int    // scopes whose files are open
	maxOpen    int    // bound on openScopes; see closeIdle
	versions   int    // earlier documents kept per scope
}

// defaultMaxOpen is how many scopes keep their directory, lock and log
// files open (three descriptors each) before the least recently used are closed.
const defaultMaxOpen = 64

// scopeFiles is what a Store keeps in memory about one scope: its paths,
// open files and cached document (not the engine's scopeState).
type scopeFiles struct {
	scope     memory.Scope
	dir       string // absolute, for messages
	rel       string // relative to the data directory, for file operations
	turnsPath string
	docPath   string

	// sem is the in-process half of the scope lock (a mutex that can be
	// abandoned when ctx ends); its holder also holds flock on lockFile,
	// and owns closed, lockFile and w.
	sem      chan struct{}
	closed   bool
	lockFile *os.File
	lockFI   os.FileInfo // identity of lockFile
	gen      string      // the scope's generation, read when the lock was taken
	w        logWriter
	// gc is the log's writes waiting for a fsync (groupcommit.go).
	gc groupCommit
	// sd is the scope's directory, kept open (scopedir.go).
	sd scopeDir

	// used and open belong to Store.mu.
	used uint64
	open bool

	// mu guards the read caches, which lock-free readers share.
	mu         sync.Mutex
	marks      checkpoints
	doc        *docCache
	tornLogged bool
	// loaded is the scope's generation (see generation.go) when this
	// Store first read or wrote its turns; "" before that, or when the
	// scope had none. observed says the scope was read or written at all.
	loaded   string
	observed bool
}

// DefaultVersions is how many earlier memory documents a Store keeps per
// scope unless WithVersions says otherwise.
const DefaultVersions = 5

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock that stamps Document.LastUpdated; nil means
// time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// WithLogger sets where the store reports repairs and cleanups; nil means
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.log = l
		}
	}
}

// WithVersions sets how many earlier memory documents are kept per scope
// for undo (see ListVersions); 0 keeps none and removes those kept. A
// negative n means DefaultVersions.
func WithVersions(n int) Option {
	return func(s *Store) {
		if n >= 0 {
			s.versions = n
		}
	}
}

// Open opens the store in dir, creating dir (0700) when it does not exist,
// and removes temp files left by a save that crashed and scope directories
// left half deleted by a DeleteScope that crashed.
func Open(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open file store: no directory given")
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open file store %s: %w", dir, err)
	}
	s := &Store{
		root:     root,
		now:      time.Now,
		log:      slog.Default(),
		scopes:   map[memory.Scope]*scopeFiles{},
		maxOpen:  defaultMaxOpen,
		versions: DefaultVersions,
	}
	for _, o := range opts {
		o(s)
	}
	if err := makeRoot(root); err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	if s.d, err = openDataDir(root); err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	if err := s.removeTombstones(); err != nil {
		s.d.close()
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	if err := s.removeStaleTemps(); err != nil {
		s.d.close()
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	return s, nil
}

// makeRoot makes sure root is a directory, creating it 0700 and making
// its entry durable when it is new.
func makeRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s is not a directory", root)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	return syncDir(filepath.Dir(root))
}

// Close closes the files the store keeps open, after waiting for writes
// in progress. Methods called after Close fail with an error wrapping
// fs.ErrClosed. Closing twice is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	states := make([]*scopeFiles, 0, len(s.scopes))
	for _, st := range s.scopes {
		states = append(states, st)
	}
	s.mu.Unlock()

	var errs []error
	for _, st := range states {
		st.sem <- struct{}{}
		st.closed = true
		errs = append(errs, s.closeWriter(st), st.sd.close())
		if st.lockFile != nil {
			errs = append(errs, st.lockFile.Close())
			st.lockFile = nil
		}
		<-st.sem
	}
	errs = append(errs, s.d.close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close file store %s: %w", s.root, err)
	}
	return nil
}

// scopeRel validates scope and returns its directory, relative to the
// data directory.
func scopeRel(scope memory.Scope) (string, error) {
	if err := scope.Validate(); err != nil {
		return "", err
	}
	dir := filepath.Join(usersDir, scope.UserID)
	if scope.AgentName != "" {
		dir = filepath.Join(dir, agentsDir, scope.AgentName)
	}
	// Validate already excludes separators and dot names; this is the
	// second line of defence against a path outside the store.
	if !filepath.IsLocal(dir) || !strings.HasPrefix(dir, usersDir+string(filepath.Separator)) {
		return "", &memory.InputError{Field: "scope", Message: fmt.Sprintf("%q resolves outside the data directory", scope.Key())}
	}
	return dir, nil
}

// state returns the in-memory state of scope, validating it first. It
// touches no file.
func (s *Store) state(scope memory.Scope) (*scopeFiles, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fs.ErrClosed
	}
	s.tick++
	if st := s.scopes[scope]; st != nil {
		st.used = s.tick
		return st, nil
	}
	rel, err := scopeRel(scope)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(s.root, rel)
	st := &scopeFiles{
		scope:     scope,
		dir:       dir,
		rel:       rel,
		turnsPath: filepath.Join(dir, turnsName),
		docPath:   filepath.Join(dir, docName),
		sem:       make(chan struct{}, 1),
		used:      s.tick,
	}
	s.scopes[scope] = st
	return st, nil
}

// lock takes the scope lock: first the in-process semaphore, then flock
// on the scope's .lock file, creating the scope directory on first use.
// It gives up when ctx ends.
func (s *Store) lock(ctx context.Context, st *scopeFiles) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := s.lockFileOf(ctx, st, true); err != nil {
		<-st.sem
		return err
	}
	return nil
}

// lockExisting is lock for a scope whose directory exists: it never
// creates it, and fails with an error wrapping errNoScope when it is
// missing (deleted, say, by another process).
func (s *Store) lockExisting(ctx context.Context, st *scopeFiles) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := s.lockFileOf(ctx, st, false); err != nil {
		<-st.sem
		return err
	}
	return nil
}

func (s *Store) lockFileOf(ctx context.Context, st *scopeFiles, create bool) error {
	for {
		if st.closed {
			return fs.ErrClosed
		}
		if st.lockFile == nil {
			if create {
				if err := s.d.mkdirAll(st.rel); err != nil {
					return err
				}
			} else if ok, err := s.d.exists(st.rel); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("%s: %w", filepath.ToSlash(st.rel), errNoScope)
			}
			f, err := s.openIn(st, lockName, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				return err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			st.lockFile, st.lockFI = f, fi
			s.mu.Lock()
			st.open = true
			s.openScopes++
			s.mu.Unlock()
		}
		if err := lockFile(ctx, st.lockFile); err != nil {
			return err
		}
		// The scope may have been deleted (its directory renamed away)
		// while this Store held the old lock file open: a lock on that
		// file excludes nobody, so check that it is still the one at the
		// path, and start over on the new one if not.
		same, err := s.lockIsCurrent(st)
		if err == nil && same {
			g, err := ensureGeneration(st.lockFile)
			if err != nil {
				unlockFile(st.lockFile)
				return err
			}
			st.gen = g
			return nil
		}
		unlockFile(st.lockFile)
		if err != nil {
			return err
		}
		s.dropFiles(st)
	}
}

// lockIsCurrent reports whether st.lockFile is the scope's .lock file on
// disk.
func (s *Store) lockIsCurrent(st *scopeFiles) (bool, error) {
	held := st.lockFI
	fi, err := s.lstatIn(st, lockName)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, fi), nil
}

// dropFiles closes the scope's open files and forgets what the caches
// know about them. The caller holds st.sem.
func (s *Store) dropFiles(st *scopeFiles) {
	if st.lockFile != nil {
		st.lockFile.Close()
	}
	s.closeWriter(st)
	st.sd.close()
	st.lockFile, st.lockFI = nil, nil
	s.mu.Lock()
	if st.open {
		st.open = false
		s.openScopes--
	}
	s.mu.Unlock()
	st.mu.Lock()
	st.marks.reset()
	st.doc = nil
	st.tornLogged = false
	st.mu.Unlock()
}

// unlock releases what lock took.
func (s *Store) unlock(st *scopeFiles) {
	if err := unlockFile(st.lockFile); err != nil {
		s.log.Error("release scope lock", "scope", st.scope.Key(), "err", err)
	}
	<-st.sem
	s.closeIdle()
}

// closeIdle closes the files of the least recently used scope when more
// than maxOpen scopes have theirs open, so that a store serving many users
// does not run out of file descriptors. A scope in use is left alone; its
// files are reopened on its next write.
func (s *Store) closeIdle() {
	s.mu.Lock()
	var lru *scopeFiles
	if s.openScopes > s.maxOpen {
		for _, st := range s.scopes {
			if st.open && (lru == nil || st.used < lru.used) {
				lru = st
			}
		}
	}
	s.mu.Unlock()
	if lru == nil {
		return
	}
	select {
	case lru.sem <- struct{}{}:
	default:
		return
	}
	defer func() { <-lru.sem }()
	if lru.closed || lru.lockFile == nil {
		return
	}
	if err := errors.Join(lru.lockFile.Close(), s.closeWriter(lru), lru.sd.close()); err != nil {
		s.log.Warn("close idle scope files", "scope", lru.scope.Key(), "err", err)
	}
	lru.lockFile, lru.lockFI = nil, nil
	s.mu.Lock()
	lru.open = false
	s.openScopes--
	s.mu.Unlock()
}
