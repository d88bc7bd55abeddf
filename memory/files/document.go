package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// racyWindow is how long after its modification time a file's stat is not
// trusted to tell a later change apart: a save within the same timestamp
// tick, of the same size, into a reused inode would look unchanged. A
// document cached that young is compared byte for byte on the next load
// (Git's "racily clean" rule). It covers coarse file system clocks.
const racyWindow = 2 * time.Second

// docCache is the last memory.json a Store read or wrote for one scope.
type docCache struct {
	fi   os.FileInfo
	raw  []byte
	doc  *memory.Document // shared; never modified once cached
	racy bool             // fi alone does not prove the file unchanged
}

// LoadDocument returns a copy of the scope's memory.json, or a
// memory.NewDocument when there is none. The parsed document is cached;
// while the file's identity, size and modification time are unchanged, a
// load costs one stat and a Clone. A file that is not valid JSON, or whose
// major version this build does not know, is an error wrapping
// memory.ErrCorrupt: it is never replaced by an empty document.
func (s *Store) LoadDocument(ctx context.Context, scope memory.Scope) (*memory.Document, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("load memory: %w", err)
	}
	path := st.docPath
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load memory %s: %w", path, err)
	}
	doc, err := s.loadDocument(st, true)
	if err != nil {
		return nil, fmt.Errorf("load memory %s: %w", path, err)
	}
	return doc.Clone(), nil
}

// UpdateDocument reads memory.json from disk under the scope lock, runs fn
// on a copy, and replaces the file atomically: a temp file
// (.memory.json.<random>.tmp, 0600) in the same directory is written and
// fsynced, renamed over memory.json, and the directory is fsynced. If fn,
// the context or any step before the rename fails, the temp file is
// removed and memory.json is untouched. If only the final directory fsync
// fails, the new document is in place but may not survive a crash, and the
// error is returned. The document being replaced is first kept in
// versions/ for undo (see ListVersions). Revision and LastUpdated are set
// by the store,
// whatever fn did to them. fn runs under the scope lock: it should be
// quick, and must not call the Store for the same scope (that call would
// wait for the lock until its context ends).
func (s *Store) UpdateDocument(ctx context.Context, scope memory.Scope, fn func(*memory.Document) error) (*memory.Document, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("update memory: %w", err)
	}
	path := st.docPath
	if fn == nil {
		return nil, fmt.Errorf("update memory %s: no update function", path)
	}
	if err := s.lock(ctx, st); err != nil {
		return nil, fmt.Errorf("update memory %s: %w", path, err)
	}
	defer s.unlock(st)
	next, err := s.updateLocked(ctx, st, fn)
	if err != nil {
		return nil, fmt.Errorf("update memory %s: %w", path, err)
	}
	return next, nil
}

// updateLocked is UpdateDocument for a caller that holds the scope lock.
// Before memory.json is replaced, the document it held is kept in
// versions/ (see keepVersion).
func (s *Store) updateLocked(ctx context.Context, st *scopeFiles, fn func(*memory.Document) error) (*memory.Document, error) {
	cur, err := s.loadDocument(st, false)
	if err != nil {
		return nil, err
	}
	var curRaw []byte
	if c := st.cachedDoc(); c != nil && c.doc == cur {
		curRaw = c.raw
	}
	next, err := memory.NextRevision(ctx, cur, fn, s.now())
	if err != nil {
		return nil, err
	}
	raw, err := encodeDocument(next)
	if err != nil {
		return nil, err
	}
	if err := s.keepVersion(st, cur.Revision, curRaw); err != nil {
		return nil, fmt.Errorf("keep previous version: %w", err)
	}
	fi, err := s.d.writeAtomic(st.rel, docName, raw)
	if fi != nil {
		// The file was replaced even if err reports a failed directory
		// fsync, so the cache must describe the new content.
		st.setDoc(&docCache{fi: fi, raw: raw, doc: next.Clone(), racy: true})
	}
	if err != nil {
		return nil, err
	}
	return next, nil
}

// loadDocument returns the document at path, shared with the cache: the
// caller must Clone it before changing it. With trustStat, an unchanged
// stat is enough to reuse the cache; otherwise the file is read, and only
// parsed when its bytes differ from the cached ones.
func (s *Store) loadDocument(st *scopeFiles, trustStat bool) (*memory.Document, error) {
	if trustStat {
		fi, err := s.lstatIn(st, docName)
		if errors.Is(err, fs.ErrNotExist) {
			st.setDoc(nil)
			return memory.NewDocument(), nil
		}
		if err != nil {
			return nil, err
		}
		if c := st.cachedDoc(); c != nil && !c.racy && sameStat(c.fi, fi) {
			return c.doc, nil
		}
	}

	now := time.Now() // file times are wall-clock times, whatever s.now says
	f, err := s.openIn(st, docName, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		st.setDoc(nil)
		return memory.NewDocument(), nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	var doc *memory.Document
	if c := st.cachedDoc(); c != nil && bytes.Equal(c.raw, raw) {
		doc = c.doc
	} else if doc, err = memory.ParseDocument(raw); err != nil {
		return nil, err
	}
	st.setDoc(&docCache{fi: fi, raw: raw, doc: doc, racy: now.Sub(fi.ModTime()) <= racyWindow})
	return doc, nil
}

func (st *scopeFiles) cachedDoc() *docCache {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.doc
}

func (st *scopeFiles) setDoc(c *docCache) {
	st.mu.Lock()
	st.doc = c
	st.mu.Unlock()
}

// sameStat reports whether a and b describe the same file with the same
// size and modification time. os.SameFile compares device and inode
// (syscall.Stat_t) on Unix and the file index on Windows.
func sameStat(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// encodeDocument renders d as indented JSON with a final newline, leaving
// '<', '>' and '&' readable.
func encodeDocument(d *memory.Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
