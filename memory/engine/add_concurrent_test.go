package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// gatedCommits is a store that commits in groups (memory.GroupCommitter)
// whose flushes all wait for gate to close: the test sees which writes
// reach the store while the first add waits for its flush. AppendTurns,
// which flushes as it writes, waits for the gate too.
type gatedCommits struct {
	*memStore
	gate  chan struct{} // closed: every flush is done
	wrote chan struct{} // one per write that reached the store
}

func (g *gatedCommits) AppendTurns(ctx context.Context, sc memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	out, err := g.memStore.AppendTurns(ctx, sc, turns)
	g.wrote <- struct{}{}
	<-g.gate
	return out, err
}

func (g *gatedCommits) WriteTurns(ctx context.Context, sc memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	out, err := g.memStore.AppendTurns(ctx, sc, turns)
	g.wrote <- struct{}{}
	return out, err
}

func (g *gatedCommits) SyncTurns(ctx context.Context, sc memory.Scope) error {
	<-g.gate
	return nil
}

// TestAddsOfOneUserShareAFlush starts 8 adds to one scope while the
// store's flush cannot finish: every add must reach the store (the wait
// for the flush is outside the scope's lock), and none may be
// acknowledged before the flush.
func TestAddsOfOneUserShareAFlush(t *testing.T) {
	t.Parallel()
	const clients = 8
	store := &gatedCommits{memStore: newMemStore(), gate: make(chan struct{}), wrote: make(chan struct{}, clients)}
	s := newTestService(t, store, memory.DefaultConfig())
	var (
		flushed atomic.Bool
		wg      sync.WaitGroup
	)
	for i := range clients {
		wg.Go(func() {
			res, err := s.Add(context.Background(), memory.AddRequest{ThreadID: fmt.Sprintf("c%d", i%3), UserInput: fmt.Sprintf("exchange %d", i), AgentResponse: "noted"})
			if err != nil {
				t.Error(err)
				return
			}
			if !flushed.Load() {
				t.Errorf("Add(exchange %d) = %v, acknowledged before the flush that makes it durable", i, res.TurnIDs)
			}
		})
	}
	// A watchdog, not a timing: the adds either all reach the store at
	// once or, serialised by the scope's lock, never do.
	watchdog := time.After(time.Minute)
	for n := range clients {
		select {
		case <-store.wrote:
		case <-watchdog:
			t.Errorf("%d of %d adds reached the store while the first waited for its flush: one user's adds wait for each other's flush", n, clients)
			close(store.gate)
			wg.Wait()
			return
		}
	}
	flushed.Store(true)
	close(store.gate)
	wg.Wait()
	turns, err := store.ReadTurns(t.Context(), memory.Scope{UserID: memory.DefaultConfig().UserID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != clients {
		t.Errorf("stored %d turns, want %d", len(turns), clients)
	}
}

// TestRacingRetriesStoreOnce sends one exchange from 8 goroutines at
// once, as clients retrying it do, without and with an idempotency key:
// it is stored once, and every call answers with the stored turn.
func TestRacingRetriesStoreOnce(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "retry-key-1"} {
		t.Run(fmt.Sprintf("key=%q", key), func(t *testing.T) {
			t.Parallel()
			store, err := files.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			s := newTestService(t, store, memory.DefaultConfig())
			// Some turns first, so that the racing adds do not all find
			// an empty scope.
			for i := range 5 {
				if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: fmt.Sprintf("earlier %d", i), AgentResponse: "ok"}); err != nil {
					t.Fatal(err)
				}
			}
			req := memory.AddRequest{ThreadID: "t", UserInput: "my sister lives in Kyoto", AgentResponse: "Noted.", IdempotencyKey: key}
			const clients = 8
			ids := make([][]string, clients)
			dups := make([]bool, clients)
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					res, err := s.Add(context.Background(), req)
					if err != nil {
						t.Error(err)
						return
					}
					ids[i], dups[i] = res.TurnIDs, res.Duplicate
				})
			}
			wg.Wait()
			turns, err := store.ReadTurns(t.Context(), memory.Scope{UserID: memory.DefaultConfig().UserID}, 0)
			if err != nil {
				t.Fatal(err)
			}
			stored := 0
			for _, tu := range turns {
				if tu.User == req.UserInput {
					stored++
				}
			}
			if stored != 1 {
				t.Fatalf("the exchange sent by %d clients at once is stored %d times, want once", clients, stored)
			}
			fresh := 0
			for i := range clients {
				if len(ids[i]) != 1 || ids[i][0] != ids[0][0] {
					t.Errorf("Add() #%d answered turns %v, want the one stored turn %v", i, ids[i], ids[0])
				}
				if !dups[i] {
					fresh++
				}
			}
			if fresh != 1 {
				t.Errorf("%d of %d racing adds answered as new, want 1 (the others duplicates)", fresh, clients)
			}
		})
	}
}

// failingFlush is a store that commits in groups and whose every flush
// fails, cutting what was written since from the log, as the file store
// does when an fsync fails.
type failingFlush struct {
	*memStore
	mu       sync.Mutex
	unsynced map[string]bool
}

func (f *failingFlush) WriteTurns(ctx context.Context, sc memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	out, err := f.memStore.AppendTurns(ctx, sc, turns)
	f.mu.Lock()
	for _, t := range out {
		f.unsynced[t.ID] = true
	}
	f.mu.Unlock()
	return out, err
}

func (f *failingFlush) SyncTurns(ctx context.Context, sc memory.Scope) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.memStore.DeleteTurns(ctx, sc, func(t memory.Turn) bool { return f.unsynced[t.ID] }); err != nil {
		return err
	}
	clear(f.unsynced)
	return errors.New("fsync: input/output error")
}

// TestAddWhoseFlushFailsIsForgotten: an add whose flush fails is not
// acknowledged, and what it held in memory goes with it: no retrieval
// finds the exchange the log no longer has.
func TestAddWhoseFlushFailsIsForgotten(t *testing.T) {
	t.Parallel()
	store := &failingFlush{memStore: newMemStore(), unsynced: map[string]bool{}}
	s := newTestService(t, store, memory.DefaultConfig())
	res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: "my passport is in the blue drawer", AgentResponse: "Noted."})
	if err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("Add with a failing flush = %+v, %v; want the flush's error", res, err)
	}
	got, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "where is my passport"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got.Pages {
		if strings.Contains(p.User, "passport") {
			t.Errorf("Retrieve after the failed add found %q: the unflushed exchange stayed in memory", p.User)
		}
	}
	if strings.Contains(got.Injection, "passport") {
		t.Errorf("the injection after the failed add mentions the unflushed exchange:\n%s", got.Injection)
	}
}
