package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Shared state of serve --http instances: static bearer token records and
// named keys (schema version 2). Neither is memory, so neither is part of
// memory.Store; package cli hands them to its HTTP layer.

// TokensChannel is the NOTIFY channel on which every change to
// mnemo_tokens is announced, with the token's id as payload.
const TokensChannel = "mnemo_tokens_changed"

// ErrNoToken is returned by RevokeToken for an id that names no token, or
// one already revoked.
var ErrNoToken = errors.New("no such token")

// TokenRecord is one static token as stored: never the token, only its
// hash.
type TokenRecord struct {
	ID, Hash, User, Agent string
	Created               time.Time
}

// AddToken stores a new token's record. Its id and hash must be new.
func (s *Store) AddToken(ctx context.Context, t TokenRecord) error {
	err := s.write(ctx, func() error {
		_, err := s.pool.Exec(ctx, `INSERT INTO mnemo_tokens (id, hash, user_id, agent_name, created)
			VALUES ($1, $2, $3, $4, $5)`, t.ID, t.Hash, t.User, t.Agent, t.Created)
		return err
	})
	return s.err("add token", err)
}

// Tokens returns the tokens not revoked, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]TokenRecord, error) {
	var out []TokenRecord
	err := s.read(ctx, func() error {
		out = out[:0]
		rows, err := s.pool.Query(ctx, `SELECT id, hash, user_id, agent_name, created FROM mnemo_tokens
			WHERE revoked IS NULL ORDER BY created, id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (TokenRecord, error) {
			var t TokenRecord
			err := row.Scan(&t.ID, &t.Hash, &t.User, &t.Agent, &t.Created)
			return t, err
		})
		return err
	})
	if err != nil {
		return nil, s.err("list tokens", err)
	}
	return out, nil
}

// RevokeToken marks the token with id revoked, for every instance, and
// returns its record; it wraps ErrNoToken when there is no such token
// not yet revoked.
func (s *Store) RevokeToken(ctx context.Context, id string) (TokenRecord, error) {
	var t TokenRecord
	err := s.write(ctx, func() error {
		return s.pool.QueryRow(ctx, `UPDATE mnemo_tokens SET revoked = now()
			WHERE id = $1 AND revoked IS NULL
			RETURNING id, hash, user_id, agent_name, created`, id).Scan(&t.ID, &t.Hash, &t.User, &t.Agent, &t.Created)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return TokenRecord{}, fmt.Errorf("revoke %s: %w", id, ErrNoToken)
	}
	if err != nil {
		return TokenRecord{}, s.err("revoke token", err)
	}
	return t, nil
}

// Key returns the secret named name, size random bytes made by the
// first caller on this database and the same for every later one,
// whatever instance asks.
func (s *Store) Key(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("key %s: %w", name, err)
	}
	var key []byte
	err := s.write(ctx, func() error {
		// The INSERT does nothing when another instance got there
		// first; the SELECT then reads that instance's key.
		if _, err := s.pool.Exec(ctx, `INSERT INTO mnemo_keys (name, secret) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
			return err
		}
		return s.pool.QueryRow(ctx, `SELECT secret FROM mnemo_keys WHERE name = $1`, name).Scan(&key)
	})
	if err != nil {
		return nil, s.err("key "+name, err)
	}
	if len(key) != size {
		return nil, fmt.Errorf("key %s: stored key has %d bytes, want %d", name, len(key), size)
	}
	return key, nil
}

// WatchTokens calls changed whenever a token is added or revoked on the
// database, by any instance or command, until ctx ends, and then returns
// ctx's error. It listens on its own connection and calls changed each
// time it starts listening (first, and after reconnecting), since a
// change may have been missed meanwhile. changed runs on WatchTokens'
// goroutine and should return quickly.
func (s *Store) WatchTokens(ctx context.Context, changed func()) error {
	return s.keepListening(ctx, "token changes", func(ctx context.Context) error { return s.listenTokens(ctx, changed) })
}

func (s *Store) listenTokens(ctx context.Context, changed func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+TokensChannel); err != nil {
		return err
	}
	changed()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		changed()
	}
}
