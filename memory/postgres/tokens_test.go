package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
)

// TestTokens: two Stores on one database (two instances) share the
// token records: one adds, the other lists; one revokes, the other's
// watch hears of it, and a revoked token is neither listed nor revoked
// twice.
func TestTokens(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	ctx, cancel := context.WithCancel(t.Context()) // go test -timeout is the bound
	defer cancel()

	changes := make(chan struct{}, 16)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() { watched <- b.WatchTokens(watchCtx, func() { changes <- struct{}{} }) }()
	heard := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatalf("%s: no change announced", what)
		}
	}
	heard("listening") // the watch reports that it (re)started

	created := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	alice := postgres.TokenRecord{ID: "tok_000000000001", Hash: "sha256:aa", User: "alice", Created: created}
	bob := postgres.TokenRecord{ID: "tok_000000000002", Hash: "sha256:bb", User: "bob", Agent: "coder", Created: created.Add(time.Second)}
	for _, r := range []postgres.TokenRecord{alice, bob} {
		if err := a.AddToken(ctx, r); err != nil {
			t.Fatalf("AddToken(%s): %v", r.ID, err)
		}
		heard("add " + r.ID)
	}
	if err := a.AddToken(ctx, alice); err == nil {
		t.Errorf("AddToken of an id already stored succeeded")
	}
	list, err := b.Tokens(ctx)
	if err != nil || len(list) != 2 || !list[0].Created.Equal(alice.Created) || list[0].User != "alice" || list[1].Agent != "coder" || list[1].Hash != "sha256:bb" {
		t.Fatalf("Tokens() on the other store = %+v, %v", list, err)
	}
	got, err := b.RevokeToken(ctx, alice.ID)
	if err != nil || got.User != "alice" {
		t.Fatalf("RevokeToken() = %+v, %v", got, err)
	}
	heard("revoke")
	if _, err := a.RevokeToken(ctx, alice.ID); !errors.Is(err, postgres.ErrNoToken) {
		t.Errorf("revoking twice: %v, want ErrNoToken", err)
	}
	if _, err := a.RevokeToken(ctx, "tok_ffffffffffff"); !errors.Is(err, postgres.ErrNoToken) {
		t.Errorf("revoking an unknown id: %v, want ErrNoToken", err)
	}
	if list, _ := a.Tokens(ctx); len(list) != 1 || list[0].ID != bob.ID {
		t.Errorf("Tokens() after the revocation = %+v, want bob's only", list)
	}
	stopWatch()
	if err := <-watched; !errors.Is(err, context.Canceled) {
		t.Errorf("WatchTokens() = %v, want context.Canceled", err)
	}
}

// TestKey: instances asking for a key at once all get the one key the
// first of them made.
func TestKey(t *testing.T) {
	url := pgtest.NewDatabase(t)
	stores := []*postgres.Store{mustOpen(t, url), mustOpen(t, url), mustOpen(t, url)}
	keys := make([][]byte, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			k, err := s.Key(t.Context(), "ui", 32)
			if err != nil {
				t.Errorf("Key(): %v", err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Errorf("key %d = %x, want the 32 bytes of key 0 %x", i, k, keys[0])
		}
	}
	if other, err := stores[0].Key(t.Context(), "other", 32); err != nil || bytes.Equal(other, keys[0]) {
		t.Errorf("a key of another name = %x, %v; want a different key", other, err)
	}
	if _, err := stores[0].Key(t.Context(), "ui", 16); err == nil {
		t.Errorf("Key() of another size than stored succeeded")
	}
}
