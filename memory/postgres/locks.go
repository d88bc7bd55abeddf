package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
)

var _ memory.ScopeLocker = (*Store)(nil)

// unlockTimeout bounds the unlock of an updater lock; past it the session
// is closed, which releases the lock as well.
const unlockTimeout = 5 * time.Second

// updaterLockKey is the advisory lock key of a scope's updater lock: a
// 64-bit hash of the scope with a prefix of its own, so that it does not
// meet the migration lock. Two scopes whose keys collide only wait for
// each other.
func updaterLockKey(scope memory.Scope) int64 {
	h := fnv.New64a()
	h.Write([]byte("mnemo updater\x00" + scope.Key()))
	return int64(h.Sum64())
}

// TryLockScope takes the scope's updater lock — a session advisory lock
// (pg_try_advisory_lock) on a connection of its own, outside the pool that
// serves reads and writes, held until unlock — if no session of any
// instance holds it. ok false means another holds it. The lock ends with
// its connection: Close closes those still held, and if a connection is
// lost another instance may take the lock; the watermark check of
// UpdateDocument keeps turns from being applied twice.
func (s *Store) TryLockScope(ctx context.Context, scope memory.Scope) (unlock func(), ok bool, err error) {
	if _, _, err := scopeArgs(scope); err != nil {
		return nil, false, err
	}
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] += " (updater lock)"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, false, s.err("updater lock of "+scope.Key(), err)
	}
	bg := context.WithoutCancel(ctx)
	key := updaterLockKey(scope)
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil || !ok {
		conn.Close(bg)
		return nil, false, s.err("updater lock of "+scope.Key(), err)
	}
	s.lockMu.Lock()
	if s.closed {
		s.lockMu.Unlock()
		conn.Close(bg)
		return nil, false, s.err("updater lock of "+scope.Key(), errors.New("store closed"))
	}
	s.lockConns[conn] = struct{}{}
	s.lockMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.lockMu.Lock()
			delete(s.lockConns, conn)
			s.lockMu.Unlock()
			// Unlocked before the session ends, so that the lock is
			// free when unlock returns (a closed session releases its
			// locks too, but the server does so after the close).
			uctx, cancel := context.WithTimeout(bg, unlockTimeout)
			_, _ = conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", key)
			cancel()
			conn.Close(bg)
		})
	}, true, nil
}

// closeLocks ends the sessions of the updater locks still held.
func (s *Store) closeLocks() {
	s.lockMu.Lock()
	s.closed = true
	conns := s.lockConns
	s.lockConns = nil
	s.lockMu.Unlock()
	for c := range conns {
		c.Close(context.Background())
	}
}
