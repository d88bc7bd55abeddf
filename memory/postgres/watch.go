package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
)

var (
	_ memory.ScopeWatcher   = (*Store)(nil)
	_ memory.ScopeVersioner = (*Store)(nil)
)

// Channel is the NOTIFY channel on which every change to a scope's turn
// log or document is announced (by a trigger, whoever wrote it), with the
// scope's memory.Scope.Key as payload.
const Channel = "mnemo_scope_changed"

// watchRetry is the pause before reconnecting a lost watch connection.
const watchRetry = time.Second

// Watch calls changed with each scope whose turn log or document is
// changed on the database — by any instance, this one included — until
// ctx ends, and then returns ctx's error. It listens on its own
// connection (outside the pool). Notifications are hints that let a
// reader skip polling; they are delivered at commit, may be merged, and
// are lost while the connection is down. Each time Watch starts
// listening — first, and after reconnecting — it calls changed with the
// zero Scope, meaning every scope may have changed since. The
// revision check (Document.Revision and TurnLogEpoch, and ReadTurns after
// the last Seq seen) stays correct without them. changed runs on Watch's
// goroutine and should return quickly.
func (s *Store) Watch(ctx context.Context, changed func(memory.Scope)) error {
	return s.keepListening(ctx, "scope changes", func(ctx context.Context) error { return s.listen(ctx, changed) })
}

// keepListening runs listen until ctx ends, reconnecting after
// watchRetry each time it fails, and then returns ctx's error; what names
// the notifications in the warning.
func (s *Store) keepListening(ctx context.Context, what string, listen func(context.Context) error) error {
	for {
		err := listen(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("listening for "+what+" failed; reconnecting", "db", s.masked, "err", classify(err, s.password), "retry_in", watchRetry)
		t := time.NewTimer(watchRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// listen connects, LISTENs, reports that with the zero Scope, and relays
// notifications until the connection fails or ctx ends.
func (s *Store) listen(ctx context.Context, changed func(memory.Scope)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	changed(memory.Scope{})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		user, agent, _ := strings.Cut(n.Payload, "/")
		scope := memory.Scope{UserID: user, AgentName: agent}
		if scope.Validate() == nil {
			changed(scope)
		}
	}
}

// ScopeVersion returns the scope's row id, last Seq and document revision
// as one value: the columns whose change the trigger announces, read in
// one indexed lookup. A scope deleted and written again is a new row, so
// its version differs even when its counters start over.
func (s *Store) ScopeVersion(ctx context.Context, scope memory.Scope) (string, error) {
	user, agent, err := scopeArgs(scope)
	if err != nil {
		return "", fmt.Errorf("read version of a scope: %w", err)
	}
	var v string
	err = s.read(ctx, func() error {
		err := s.pool.QueryRow(ctx, `SELECT id::text || '.' || last_seq::text || '.' || revision::text
			FROM mnemo_scopes WHERE user_id = $1 AND agent_name = $2`, user, agent).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			v = ""
			return nil
		}
		return err
	})
	if err != nil {
		return "", s.err("read version of "+scope.Key(), err)
	}
	return v, nil
}
