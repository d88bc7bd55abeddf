package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// retryClock is a settable clock shared by the services of one test.
type retryClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *retryClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *retryClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openOn opens a store and a service over dir, as one process would.
func openOn(t *testing.T, dir string, clock *retryClock) (*engine.Service, *files.Store) {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatalf("files.Open() = %v", err)
	}
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatalf("tiktoken.New() = %v", err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, counter, engine.WithClock(clock.Now))
	if err != nil {
		t.Fatalf("NewService() = %v", err)
	}
	t.Cleanup(func() { svc.Close(context.Background()); store.Close() })
	return svc, store
}

// TestAddRetryIsStoredOnce sends exchanges again as a client retrying
// after a time-out would: within DuplicateWindow the same exchange in the
// same thread is answered with the stored turn, also after a restart and
// from another process over the same data directory; a new exchange, an
// old one, another thread or another timestamp is stored.
func TestAddRetryIsStoredOnce(t *testing.T) {
	dir := t.TempDir()
	clock := &retryClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	a, store := openOn(t, dir, clock)
	b, _ := openOn(t, dir, clock) // another process on the same directory

	add := func(svc *engine.Service, req memory.AddRequest) *memory.AddResult {
		t.Helper()
		res, err := svc.Add(t.Context(), req)
		if err != nil {
			t.Fatalf("Add(%+v) = %v", req, err)
		}
		return res
	}
	pair := func(thread, user, key string) memory.AddRequest {
		return memory.AddRequest{ThreadID: thread, UserInput: user, AgentResponse: "Noted.", IdempotencyKey: key}
	}

	first := add(a, pair("t1", "I sail a Contessa 32.", ""))
	steps := []struct {
		name    string
		svc     *engine.Service
		advance time.Duration
		req     memory.AddRequest
		dup     bool
	}{
		{"same exchange again", a, 10 * time.Second, pair("t1", "I sail a Contessa 32.", ""), true},
		{"same exchange from another process", b, 10 * time.Second, pair("t1", "I sail a Contessa 32.", ""), true},
		{"same exchange in another thread", a, 0, pair("t2", "I sail a Contessa 32.", ""), false},
		{"another exchange", a, 0, pair("t1", "My boat is called Marlin.", ""), false},
		{"the first exchange, no longer the last", a, 0, pair("t1", "I sail a Contessa 32.", ""), false},
		{"same exchange after the window", a, memory.DuplicateWindow + time.Second, pair("t1", "I sail a Contessa 32.", ""), false},
		{"with a key", a, 0, pair("t1", "We moor in Cascais.", "k-1"), false},
		{"retry with the key", b, 30 * time.Second, pair("t1", "We moor in Cascais.", "k-1"), true},
		{"the same text with a new key", a, 0, pair("t1", "We moor in Cascais.", "k-2"), false},
		{"timestamped", a, 0, memory.AddRequest{ThreadID: "t3", UserInput: "ok", AgentResponse: "ok", Timestamp: "2024-05-08 13:56:00"}, false},
		{"timestamped retry", a, 0, memory.AddRequest{ThreadID: "t3", UserInput: "ok", AgentResponse: "ok", Timestamp: "2024-05-08 13:56:00"}, true},
		{"same words at another time (an import)", a, 0, memory.AddRequest{ThreadID: "t3", UserInput: "ok", AgentResponse: "ok", Timestamp: "2024-05-08 13:57:00"}, false},
	}
	var want []string // ids of the stored turns, in order
	want = append(want, first.TurnIDs...)
	for _, st := range steps {
		clock.Advance(st.advance)
		before := len(want)
		res := add(st.svc, st.req)
		if res.Duplicate != st.dup {
			t.Errorf("%s: Duplicate = %v, want %v (%+v)", st.name, res.Duplicate, st.dup, res)
		}
		if len(res.TurnIDs) != 1 {
			t.Fatalf("%s: TurnIDs = %q, want one", st.name, res.TurnIDs)
		}
		if st.dup {
			if !slices.Contains(want, res.TurnIDs[0]) || res.Note == "" {
				t.Errorf("%s: answered with %q (note %q), want a stored turn and a note", st.name, res.TurnIDs, res.Note)
			}
			continue
		}
		want = append(want, res.TurnIDs...)
		if len(want) != before+1 {
			t.Errorf("%s: nothing stored", st.name)
		}
	}

	// The same key for a different exchange is refused.
	_, err := a.Add(t.Context(), pair("t1", "Something else entirely.", "k-2"))
	var in *memory.InputError
	if !errors.As(err, &in) || in.Field != "idempotency_key" {
		t.Errorf("Add(reused key) = %v, want an idempotency_key input error", err)
	}

	// After a restart the turn log still tells a retry from a new exchange.
	a.Close(context.Background())
	c, _ := openOn(t, dir, clock)
	if res := add(c, pair("t1", "We moor in Cascais.", "k-2")); !res.Duplicate {
		t.Errorf("retry after a restart: %+v, want a duplicate", res)
	}

	turns, err := store.ReadTurns(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, 0)
	if err != nil {
		t.Fatalf("ReadTurns() = %v", err)
	}
	var got []string
	for _, tr := range turns {
		got = append(got, tr.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("stored turns = %q, want %q", got, want)
	}
}
