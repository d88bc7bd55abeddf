package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// sharedLocks is a ScopeLocker shared by the stores of several Services,
// standing in for PostgreSQL's advisory locks.
type sharedLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *sharedLocks) TryLockScope(_ context.Context, sc memory.Scope) (func(), bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[sc.Key()] {
		return nil, false, nil
	}
	l.held[sc.Key()] = true
	return func() {
		l.mu.Lock()
		delete(l.held, sc.Key())
		l.mu.Unlock()
	}, true, nil
}

// lockingStore is one process's view of the shared store and locks.
type lockingStore struct {
	*memStore
	*sharedLocks
}

// TestTwoServicesOneBurstOneCall checks that two Services on one store
// with a shared updater lock spend one model call on a burst of turns
// that both received inside the debounce window, and apply every turn
// once.
func TestTwoServicesOneBurstOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		locks := &sharedLocks{held: map[string]bool{}}
		// The first update's model call is still running when the other
		// service's timer fires.
		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("User builds mnemo"), nil }, block: make(chan struct{})}
		a := newTestService(t, lockingStore{store, locks}, memory.DefaultConfig(), WithLLM(llm))
		b := newTestService(t, lockingStore{store, locks}, memory.DefaultConfig(), WithLLM(llm))
		defer a.Close(context.Background())
		defer b.Close(context.Background())
		for i := range 10 {
			addPair(t, a, "t1", fmt.Sprintf("burst turn a%d", i), "ok")
			addPair(t, b, "t1", fmt.Sprintf("burst turn b%d", i), "ok")
			time.Sleep(time.Second)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		close(llm.block)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		calls := updatePrompts(llm.calls())
		if len(calls) != 1 {
			t.Fatalf("LLM called %d times for updates of one burst on two services, want 1", len(calls))
		}
		for i := range 10 {
			for _, who := range []string{"a", "b"} {
				if n := strings.Count(calls[0], fmt.Sprintf("burst turn %s%d\n", who, i)); n != 1 {
					t.Errorf("turn %s%d appears %d times in the prompt, want 1", who, i, n)
				}
			}
		}
		doc, err := store.LoadDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Watermarks["t1"] != 20 {
			t.Errorf("watermark of t1 = %d, want 20 (every turn applied)", doc.Watermarks["t1"])
		}
	})
}

// TestUpdaterLockHeldElsewhere checks that a background update leaves a
// scope alone while another process holds its lock, and runs it (once)
// after.
func TestUpdaterLockHeldElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		locks := &sharedLocks{held: map[string]bool{}}
		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("User builds mnemo"), nil }}
		s := newTestService(t, lockingStore{store, locks}, memory.DefaultConfig(), WithLLM(llm))
		defer s.Close(context.Background())
		unlock, ok, _ := locks.TryLockScope(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
		if !ok {
			t.Fatal("TryLockScope() = not ok on a free lock")
		}
		addPair(t, s, "t1", "held elsewhere", "ok")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := len(llm.calls()); n != 0 {
			t.Fatalf("LLM called %d times while another process held the lock, want 0", n)
		}
		unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(updatePrompts(llm.calls())); n != 1 {
			t.Fatalf("LLM called %d times for updates after the lock was released, want 1", n)
		}
	})
}

// TestScopeCacheBounded touches many scopes with a small budget: the
// states kept stay within it, and an evicted scope reads as before.
func TestScopeCacheBounded(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ScopeCacheMB = 1
	s, err := NewService(cfg, newMemStore(), mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	const users = 1500
	for i := range users {
		user := fmt.Sprintf("user%04d", i)
		if _, err := s.Add(t.Context(), memory.AddRequest{UserID: user, UserInput: "my favourite colour is " + user, AgentResponse: "noted"}); err != nil {
			t.Fatal(err)
		}
		if st := s.CacheStats(); st.Bytes > st.Budget+64<<10 {
			t.Fatalf("after %d users the states hold %d bytes, over the budget %d", i+1, st.Bytes, st.Budget)
		}
	}
	st := s.CacheStats()
	if st.Scopes >= users/2 {
		t.Errorf("%d of %d scopes kept with a 1 MB budget, want evictions", st.Scopes, users)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{UserID: "user0000", Query: "favourite colour"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 1 || !strings.Contains(res.Pages[0].User, "user0000") {
		t.Errorf("Retrieve() of an evicted scope = %+v, want its one turn", res.Pages)
	}
}

// TestEvictionKeepsPendingWork checks that scopes evicted with turns
// pending for the updater are still updated: the work is read from the
// store, not kept in the state.
func TestEvictionKeepsPendingWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := memory.DefaultConfig()
		cfg.ScopeCacheMB = 1
		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("A fact"), nil }}
		store := newMemStore()
		s, err := NewService(cfg, store, mustCounter(t), WithLLM(llm), WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		const users = 400
		for i := range users {
			if _, err := s.Add(t.Context(), memory.AddRequest{UserID: fmt.Sprintf("u%d", i), UserInput: "remember this", AgentResponse: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.CacheStats().Scopes; n >= users {
			t.Fatalf("%d scopes kept, want some evicted", n)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if n := len(updatePrompts(llm.calls())); n != users {
			t.Errorf("LLM called %d times, want %d (one per scope)", n, users)
		}
		for i := range users {
			doc, _ := store.LoadDocument(t.Context(), memory.Scope{UserID: fmt.Sprintf("u%d", i)})
			if doc.Watermarks[memory.DefaultThreadID] != 1 {
				t.Fatalf("scope u%d: watermark %d, want 1", i, doc.Watermarks[memory.DefaultThreadID])
			}
		}
	})
}
