package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Snapshot policy. A snapshot is saved in the background once the pages
// indexed from text since the last one (or since the start) reach
// snapshotAfter, or a quarter of all pages, whichever is more
// (backgroundSnapshotDue); and on Close, or when the scope leaves the
// cache, once they reach snapshotAtClose, whatever the share: a restart
// after a clean stop then tokenizes fewer than snapshotAtClose pages.
const (
	snapshotAfter   = 5000
	snapshotAtClose = 500
)

// pageIndexHeader opens a snapshot: which turns the index covers. The
// lexical snapshot follows it.
type pageIndexHeader struct {
	Version int `json:"version"`
	// Pages is how many turns, from the first of the log, are indexed:
	// page ids 0 to Pages-1.
	Pages int `json:"pages"`
	// LastSeq is the Seq of the last of them, and IDsHash the FNV-64a of
	// their ids: a snapshot whose turns are not the log's is not used.
	LastSeq int64  `json:"lastSeq"`
	IDsHash uint64 `json:"idsHash"`
	// Epoch is the document's TurnLogEpoch when the snapshot was taken.
	Epoch int64 `json:"epoch"`
}

const pageIndexVersion = 1

// pageSnapshot is a snapshot read from the store, not yet checked against
// the turn log.
type pageSnapshot struct {
	head pageIndexHeader
	ix   *lexical.Index
	err  error
}

// readPageSnapshot reads the scope's snapshot; a nil result means there
// is none to use. A snapshot in a file is decoded as it is read
// (lexical.ReadSized), never held whole beside the index made from it.
func (s *Service) readPageSnapshot(ctx context.Context, scope memory.Scope) *pageSnapshot {
	rc, err := s.pageStore.OpenPageIndex(ctx, scope)
	if err != nil || rc == nil {
		return &pageSnapshot{err: err}
	}
	defer rc.Close()
	var r io.Reader = rc
	size := int64(-1)
	if f, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if size < 0 {
		data, err := readSized(rc)
		if err != nil {
			return &pageSnapshot{err: fmt.Errorf("read page index snapshot: %w", err)}
		}
		r, size = bytes.NewReader(data), int64(len(data))
	}
	br := bufio.NewReaderSize(r, 4096)
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			return &pageSnapshot{err: errors.New("read page index header: no end of line")}
		}
		return &pageSnapshot{err: fmt.Errorf("read page index snapshot: %w", err)}
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	var head pageIndexHeader
	if err := json.Unmarshal(line, &head); err != nil || head.Version != pageIndexVersion {
		return &pageSnapshot{err: fmt.Errorf("page index header %.80q is not version %d", line, pageIndexVersion)}
	}
	ix, err := lexical.ReadSized(br, size-int64(len(line))-1, lexical.Options{})
	if err != nil {
		return &pageSnapshot{err: err}
	}
	return &pageSnapshot{head: head, ix: ix}
}

// readSized reads r to its end into one buffer, sized at once when r can
// tell its size: a snapshot is read in one allocation, not in the
// doubling steps of io.ReadAll.
func readSized(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<31 {
			buf.Grow(int(fi.Size()) + bytes.MinRead)
		}
	}
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// fits reports whether the snapshot indexes exactly the first
// head.Pages of turns.
func (p *pageSnapshot) fits(turns []memory.Turn, epoch int64) bool {
	h := p.head
	if p.ix == nil || h.Epoch != epoch || h.Pages < 1 || h.Pages > len(turns) || turns[h.Pages-1].Seq != h.LastSeq {
		return false
	}
	return turnIDsHash(h.Pages, func(i int) string { return turns[i].ID }) == h.IDsHash
}

// turnIDsHash is the FNV-64a of the ids 0 to n-1, each ended by a zero
// byte. It is hashed here, a byte at a time, rather than through
// hash/fnv's Write: a restart hashes every id of the log.
func turnIDsHash(n int, id func(int) string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := range n {
		s := id(i)
		for j := 0; j < len(s); j++ {
			h = (h ^ uint64(s[j])) * prime64
		}
		h *= prime64 // the zero byte: h ^ 0 is h
	}
	return h
}

// snapshotDue reports whether st's index has grown by least pages or more
// since its last snapshot, with none being written.
func (st *scopeState) snapshotDue(least int) bool {
	fresh := len(st.Turns) - st.snapPages
	return !st.snapBusy && fresh > 0 && fresh >= least
}

// backgroundSnapshotDue is snapshotDue for a save while the scope is in
// use: writing a snapshot costs time in the size of the whole index, so
// one is written once the fresh pages are a quarter of all.
func (st *scopeState) backgroundSnapshotDue() bool {
	return st.snapshotDue(max(snapshotAfter, len(st.Turns)/4))
}

// savePageSnapshot writes a snapshot of st's page index in the
// background. The caller holds st.mu for writing; the snapshot is taken
// under the read lock once the caller lets go.
func (s *Service) savePageSnapshot(st *scopeState) {
	st.snapBusy = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.writePageSnapshot(s.bgCtx, st)
	}()
}

// writePageSnapshot serialises st's page index under its read lock and
// saves it.
func (s *Service) writePageSnapshot(ctx context.Context, st *scopeState) {
	start := time.Now()
	st.mu.RLock()
	head := pageIndexHeader{Version: pageIndexVersion, Pages: len(st.Turns), Epoch: st.logEpoch}
	var data bytes.Buffer
	var err error
	if head.Pages > 0 {
		head.LastSeq = st.Turns[head.Pages-1].Seq
		head.IDsHash = turnIDsHash(head.Pages, func(i int) string { return st.Turns[i].ID })
		line, _ := json.Marshal(head) // plain numbers: cannot fail
		data.Write(append(line, '\n'))
		_, err = st.Index.WriteTo(&data)
	}
	st.mu.RUnlock()

	// A state dropped meanwhile (its turns were rewritten or forgotten)
	// is retired and never replaces a newer snapshot (saveCache).
	saved := false
	if head.Pages > 0 && err == nil {
		saved, err = s.saveCache(st, "page index snapshot", func() error {
			return s.pageStore.SavePageIndex(ctx, st.scope, data.Bytes())
		})
	}
	st.mu.Lock()
	st.snapBusy = false
	if saved {
		st.snapPages = head.Pages
	}
	st.mu.Unlock()
	if err != nil {
		s.log.Warn("cannot save the page index snapshot; the next start indexes the turn log again", "scope", st.scope.Key(), "err", err)
		return
	}
	if !saved {
		return
	}
	s.log.Debug("page index snapshot saved", "scope", st.scope.Key(), "pages", head.Pages, "bytes", data.Len(), "took", time.Since(start))
}

// flushPageSnapshots saves the snapshot of every scope whose index grew by
// snapshotAtClose pages or more since its last one; Close calls it.
func (s *Service) flushPageSnapshots(ctx context.Context) {
	if s.pageStore == nil {
		return
	}
	s.mu.Lock()
	var due []*scopeState
	for _, st := range s.scopes {
		due = append(due, st)
	}
	s.mu.Unlock()
	for _, st := range due {
		st.mu.Lock()
		ok := st.snapshotDue(snapshotAtClose)
		if ok {
			st.snapBusy = true
		}
		st.mu.Unlock()
		if ok && ctx.Err() == nil {
			s.writePageSnapshot(ctx, st)
		}
	}
}
