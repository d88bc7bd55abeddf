package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory"
)

var _ memory.GroupCommitter = (*Store)(nil)

// groupCommit is a scope's turn log writes waiting for their fsync. Each
// WriteTurns is a ticket; SyncTurns waits until a successful fsync
// covers its ticket. The first waiter with no fsync running becomes the
// leader: it fsyncs, outside the scope lock, everything written so far,
// and the waiters that arrived meanwhile are covered by it or by the
// next one. Its fields belong to mu.
type groupCommit struct {
	mu      sync.Mutex
	done    *sync.Cond
	written uint64   // tickets handed out
	synced  uint64   // tickets covered by a successful fsync
	failed  uint64   // tickets whose turns were cut off after a failed fsync
	failErr error    // why
	syncing bool     // a leader's fsync is running
	f       *os.File // the log file of the last write
	end     int64    // the log's end after it
	durable int64    // the log's end at the last successful fsync, or before the first unsynced write
}

func (g *groupCommit) init() {
	if g.done == nil {
		g.done = sync.NewCond(&g.mu)
	}
}

// WriteTurns appends turns like AppendTurns, but returns before the
// fsync; SyncTurns waits for it.
func (s *Store) WriteTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	return s.appendTurns(ctx, scope, turns, false)
}

// SyncTurns waits until every turn written to scope before the call is
// durable, becoming the one to fsync when none is running.
func (s *Store) SyncTurns(ctx context.Context, scope memory.Scope) error {
	st, err := s.state(scope)
	if err != nil {
		return fmt.Errorf("sync turns: %w", err)
	}
	g := &st.gc
	g.mu.Lock()
	g.init()
	ticket := g.written
	for {
		switch {
		case g.failed >= ticket && g.failErr != nil && g.synced < ticket:
			err := g.failErr
			g.mu.Unlock()
			return fmt.Errorf("sync turns of %s: %w", st.turnsPath, err)
		case g.synced >= ticket:
			g.mu.Unlock()
			return nil
		case g.syncing:
			g.done.Wait()
			continue
		}
		target, f, end := g.written, g.f, g.end
		g.syncing = true
		g.mu.Unlock()
		err := f.Sync()
		if errors.Is(err, fs.ErrClosed) {
			// The log was closed since (its writer reopened): closing
			// syncs what was written first (see flushPending).
			err = nil
		}
		if err != nil {
			err = s.cutUnsynced(st, err)
		}
		g.mu.Lock()
		g.syncing = false
		if err == nil && target > g.synced {
			g.synced, g.durable = target, end
		}
		g.done.Broadcast()
	}
}

// cutUnsynced handles a failed fsync: under the scope lock, the log is
// cut back to its end at the last successful fsync, and every ticket
// written so far fails with err.
func (s *Store) cutUnsynced(st *scopeFiles, err error) error {
	g := &st.gc
	if lerr := s.lock(context.Background(), st); lerr != nil {
		err = errors.Join(err, lerr)
	} else {
		g.mu.Lock()
		durable, end, f := g.durable, g.end, g.f
		g.mu.Unlock()
		// Only this Store's own writes are cut: a log another writer
		// appended to since was fsynced by it, and is left alone.
		if f != nil && f == st.w.f && st.w.valid && st.w.off == end {
			st.w.off = durable
			s.rollback(st, st.turnsPath)
		}
		g.mu.Lock()
		g.failed, g.failErr = g.written, err
		g.mu.Unlock()
		s.unlock(st)
	}
	return err
}

// noteWrite records an append to the log, from off to end, fsynced or
// not. The caller holds the scope lock.
func (s *Store) noteWrite(st *scopeFiles, off, end int64, synced bool) {
	g := &st.gc
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	if synced {
		// This fsync covered every earlier write to the same file too.
		if g.f == st.w.f {
			g.synced = g.written
		}
		g.durable = end
		return
	}
	if g.written == g.synced || g.f != st.w.f {
		g.durable = off
	}
	g.written++
	g.f, g.end = st.w.f, end
}

// closeWriter closes the log's writer, first making the writes that wait
// for a fsync durable. The caller holds the scope lock.
func (s *Store) closeWriter(st *scopeFiles) error {
	s.flushPending(st)
	err := st.w.close()
	st.w = logWriter{}
	return err
}

// flushPending fsyncs the log before its writer is closed when writes
// are waiting for a fsync, so that a leader that finds the file closed
// knows them durable. The caller holds the scope lock.
func (s *Store) flushPending(st *scopeFiles) {
	g := &st.gc
	g.mu.Lock()
	pending := g.written > g.synced && g.f == st.w.f && g.f != nil
	target := g.written
	g.mu.Unlock()
	if !pending {
		return
	}
	err := st.w.f.Sync()
	g.mu.Lock()
	if err != nil {
		g.failed, g.failErr = target, err
	} else {
		g.synced = max(g.synced, target)
	}
	g.done.Broadcast()
	g.mu.Unlock()
}
