package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// concurrentClock is the fixed time of the concurrency tests: heat,
// recency and the stored times do not depend on when a call ran.
var concurrentClock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newConcurrentService is a Service over a file store in a new
// directory, at concurrentClock, whose turn ids are ids() in turn.
func newConcurrentService(t *testing.T, ids func() string) (*engine.Service, *files.Store) {
	t.Helper()
	store, err := files.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return engine.NewTestService(t, store, memory.DefaultConfig(),
		engine.WithClock(func() time.Time { return concurrentClock }), engine.WithIDs(ids)), store
}

// counterIDs returns turn ids "t00000001", "t00000002", … in turn.
func counterIDs() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("t%08d", n.Add(1)) }
}

// concurrentAdd is one exchange of the concurrency tests.
type concurrentAdd struct {
	thread, user, reply string
	at                  time.Time
}

func (a concurrentAdd) request() memory.AddRequest {
	return memory.AddRequest{ThreadID: a.thread, UserInput: a.user, AgentResponse: a.reply, Timestamp: a.at.Format(time.RFC3339)}
}

// concurrentExchanges returns n distinct exchanges over threads threads,
// named prefix, a minute apart from start.
func concurrentExchanges(prefix string, n, threads int, start time.Time) []concurrentAdd {
	r := rand.New(rand.NewPCG(11, uint64(n)))
	out := make([]concurrentAdd, n)
	for i := range out {
		out[i] = concurrentAdd{thread: fmt.Sprintf("%s-%d", prefix, i%threads), user: fmt.Sprintf("%s (note %s %d)", benchText(r, 18), prefix, i),
			reply: benchText(r, 24), at: start.Add(time.Duration(i) * time.Minute)}
	}
	return out
}

// retrieval is what a retrieval answers that must not depend on other
// calls running at the same time: everything but the sessions' heat,
// which visits change.
func retrieval(r *memory.RetrieveResult) *memory.RetrieveResult {
	c := *r
	c.Sessions = make([]memory.SessionHit, len(r.Sessions))
	for i, s := range r.Sessions {
		s.Heat = 0
		c.Sessions[i] = s
	}
	return &c
}

func addAll(t *testing.T, svc *engine.Service, adds []concurrentAdd) {
	t.Helper()
	for _, a := range adds {
		if _, err := svc.Add(t.Context(), a.request()); err != nil {
			t.Fatalf("Add() = %v", err)
		}
	}
}

// TestParallelRetrievesMatchSerial runs retrievals of one scope from 8
// goroutines at once, visits counted or not, and checks each answer is
// the one the same retrieval gave alone.
func TestParallelRetrievesMatchSerial(t *testing.T) {
	t.Parallel()
	svc, _ := newConcurrentService(t, counterIDs())
	addAll(t, svc, concurrentExchanges("c", 240, 6, concurrentClock.Add(-30*24*time.Hour)))
	queries := benchQueries(24)
	want := make([]*memory.RetrieveResult, len(queries))
	for i, q := range queries {
		r, err := svc.Retrieve(t.Context(), memory.RetrieveRequest{Query: q, Peek: true})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = retrieval(r)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 3 * len(queries) {
				i := (k*7 + g*5) % len(queries)
				r, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{Query: queries[i], Peek: (k+g)%2 == 0})
				if err != nil {
					t.Error(err)
					return
				}
				if got := retrieval(r); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("parallel Retrieve(%q) = %+v\nwant (alone) %+v", queries[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestParallelRetrievesAndAddsMatchSerial adds to one scope from 4
// goroutines while 4 others retrieve from it, then replays the adds one
// at a time, in the order the turn log holds them, into a second
// Service with the same turn ids: each retrieval must answer what the
// replay answers with as many turns stored.
func TestParallelRetrievesAndAddsMatchSerial(t *testing.T) {
	t.Parallel()
	start := concurrentClock.Add(-30 * 24 * time.Hour)
	fill := concurrentExchanges("f", 120, 4, start)
	svc, store := newConcurrentService(t, counterIDs())
	addAll(t, svc, fill)
	queries := benchQueries(16)
	// The mid-term sessions are built from the turns there are at their
	// first use, so both Services first use them with the fill stored.
	firstUse := func(svc *engine.Service) {
		if _, err := svc.Retrieve(t.Context(), memory.RetrieveRequest{Query: queries[0], Peek: true}); err != nil {
			t.Fatal(err)
		}
	}
	firstUse(svc)

	const adders, perAdder = 4, 30
	byUser := make(map[string]concurrentAdd)
	type seen struct {
		query  int
		stored int
		res    *memory.RetrieveResult
	}
	var (
		mu   sync.Mutex
		got  []seen
		wg   sync.WaitGroup
		done atomic.Int32
	)
	for a := range adders {
		adds := concurrentExchanges(fmt.Sprintf("a%d", a), perAdder, 1, start.Add(time.Duration(a)*time.Hour))
		for _, x := range adds {
			byUser[x.user] = x
		}
		wg.Go(func() {
			defer done.Add(1)
			for _, x := range adds {
				if _, err := svc.Add(context.Background(), x.request()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for g := range 4 {
		wg.Go(func() {
			for k := 0; done.Load() < adders || k < len(queries); k++ {
				i := (k*3 + g) % len(queries)
				r, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{Query: queries[i], Peek: true})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, seen{i, r.StoredTurns, retrieval(r)})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// The replay: the same ids in the log's order, so that the k-th
	// turn stored is the same turn in both.
	log, err := store.ReadTurns(t.Context(), memory.Scope{UserID: memory.DefaultConfig().UserID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != len(fill)+adders*perAdder {
		t.Fatalf("List() = %d turns, want %d", len(log), len(fill)+adders*perAdder)
	}
	next := 0
	replay, _ := newConcurrentService(t, func() string { next++; return log[next-1].ID })
	addAll(t, replay, fill)
	firstUse(replay)
	atStored := make(map[int][]seen)
	for _, s := range got {
		atStored[s.stored] = append(atStored[s.stored], s)
	}
	checked := 0
	for k := len(fill); k <= len(log); k++ {
		for _, s := range atStored[k] {
			want, err := replay.Retrieve(t.Context(), memory.RetrieveRequest{Query: queries[s.query], Peek: true})
			if err != nil {
				t.Fatal(err)
			}
			if w := retrieval(want); !reflect.DeepEqual(s.res, w) {
				t.Fatalf("Retrieve(%q) with %d turns stored, among parallel adds = %+v\nwant (replayed alone) %+v", queries[s.query], k, s.res, w)
			}
			checked++
		}
		if k < len(log) {
			x, ok := byUser[log[k].User]
			if !ok {
				t.Fatalf("turn %d (%q) is none of the adds", k, log[k].User)
			}
			addAll(t, replay, []concurrentAdd{x})
		}
	}
	if checked != len(got) {
		t.Errorf("checked %d of %d retrievals: some saw a turn count outside [%d, %d]", checked, len(got), len(fill), len(log))
	}
}
