package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestBackoffCapped checks the retry delay of a failing update: it grows
// from about 30 s, never exceeds 30 min plus jitter however long the model
// stays down, and never overflows.
func TestBackoffCapped(t *testing.T) {
	prev := time.Duration(0)
	for attempts := range 200 {
		d := backoff(attempts)
		if d < 24*time.Second || d > 36*time.Minute {
			t.Fatalf("backoff(%d) = %s, want within [24s, 36m]", attempts, d)
		}
		if attempts < 5 && d < prev/2 {
			t.Errorf("backoff(%d) = %s shrank from %s", attempts, d, prev)
		}
		prev = d
	}
	if d := backoff(1 << 30); d > 36*time.Minute || d <= 0 {
		t.Errorf("backoff(1<<30) = %s", d)
	}
}

// TestPendingBoundedWhileLLMDown checks that a long outage does not grow
// memory: however many turns arrive, the queue holds one entry per thread
// (the turns themselves wait in the durable log).
func TestPendingBoundedWhileLLMDown(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithLLM(llmFunc(func() (string, error) { return "", memory.ErrLLMUnavailable })))
	t.Cleanup(func() { s.queue.close(t.Context()) })
	for i := range 300 {
		addPair(t, s, []string{"a", "b", "c"}[i%3], fmt.Sprintf("turn %d", i), "ok") // distinct: the same exchange again would be a retry
	}
	s.queue.mu.Lock()
	n := len(s.queue.entries)
	s.queue.mu.Unlock()
	if n != 3 {
		t.Errorf("queue holds %d entries after 300 turns on 3 threads, want 3", n)
	}
	st, err := s.loadedState(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	total, _ := st.pending()
	st.mu.Unlock()
	if total != 300 {
		t.Errorf("pending = %d, want all 300 turns (durable in the log)", total)
	}
}

// TestClockGoingBackwards stores turns while the wall clock jumps back
// and forth: sequence numbers, watermarks and pending work depend on the
// log's order, never on time, so nothing is lost, reordered or skipped.
func TestClockGoingBackwards(t *testing.T) {
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	tick := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick++
		return base.Add(-time.Duration(tick) * time.Hour) // every reading is earlier
	}
	store := newMemStore()
	s := newTestService(t, store, memory.DefaultConfig(), WithClock(clock))
	for i := range 10 {
		addPair(t, s, "t", "message "+string(rune('a'+i)), "ok")
	}
	turns, _ := store.ReadTurns(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, 0)
	for i, turn := range turns {
		if turn.Seq != int64(i+1) || turn.User != "message "+string(rune('a'+i)) {
			t.Fatalf("turn %d = seq %d %q, want seq %d in arrival order", i, turn.Seq, turn.User, i+1)
		}
	}
	// A watermark in the middle leaves exactly the later turns pending,
	// though they carry earlier times.
	if _, err := store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
		d.Watermarks = map[string]int64{"t": 4}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st, err := s.loadedState(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	total, _ := st.pending()
	st.mu.Unlock()
	if total != 6 {
		t.Errorf("pending after watermark 4 = %d, want 6", total)
	}
}

// TestForgetScope forgets one user and checks that the service's caches
// (turns, indexes, document, queue) no longer hold it, and that other
// users, including one whose id starts with the same letters, keep theirs.
func TestForgetScope(t *testing.T) {
	store := newMemStore()
	s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llmFunc(func() (string, error) { return "", memory.ErrLLMUnavailable })))
	t.Cleanup(func() { s.queue.close(t.Context()) })
	ctx := t.Context()
	for _, u := range []string{"ana", "ana2", "bob"} {
		for _, agent := range []string{"", "coder"} {
			if _, err := s.Add(ctx, memory.AddRequest{UserID: u, AgentName: agent, UserInput: "my secret word is zebra " + u, AgentResponse: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.ForgetScope(ctx, "ana", ""); err != nil {
		t.Fatalf("ForgetScope() = %v", err)
	}
	for _, agent := range []string{"", "coder"} {
		got, err := s.Retrieve(ctx, memory.RetrieveRequest{UserID: "ana", AgentName: agent, Query: "secret word zebra"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Pages) != 0 || len(got.Recent) != 0 {
			t.Errorf("ana/%s still retrievable after forget: %+v", agent, got.Pages)
		}
	}
	s.queue.mu.Lock()
	for k := range s.queue.entries {
		if k.scope == "ana" || k.scope == "ana/coder" {
			t.Errorf("queue still holds %v", k)
		}
	}
	s.queue.mu.Unlock()
	for _, u := range []string{"ana2", "bob"} {
		for _, agent := range []string{"", "coder"} {
			got, err := s.Retrieve(ctx, memory.RetrieveRequest{UserID: u, AgentName: agent, Query: "secret word zebra"})
			if err != nil || len(got.Pages) != 1 {
				t.Errorf("%s/%s after forgetting ana: %v pages, %v; want its one page", u, agent, len(got.Pages), err)
			}
		}
	}
	if err := s.ForgetScope(ctx, "", ""); err == nil {
		t.Errorf("ForgetScope with no user succeeded; it must name the user")
	}
}

// llmFunc is an LLM whose every call returns what f returns.
type llmFunc func() (string, error)

func (f llmFunc) Complete(context.Context, memory.CompletionRequest) (memory.Completion, error) {
	text, err := f()
	return memory.Completion{Text: text}, err
}

// TestScopeDeletedByOtherService: when another process deletes a scope
// whose memory document had been saved, this process notices (the
// revision went down) and stops serving the deleted turns and facts.
func TestScopeDeletedByOtherService(t *testing.T) {
	store := newMemStore()
	a := newTestService(t, store, memory.DefaultConfig())
	b := newTestService(t, store, memory.DefaultConfig())
	ctx := t.Context()
	addPair(t, a, "t", "my secret word is zebra", "ok")
	if _, err := a.SaveFact(ctx, memory.SaveFactRequest{Content: "The user's secret word is zebra", Category: memory.CategoryContext, Confidence: 0.9}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Retrieve(ctx, memory.RetrieveRequest{Query: "secret word"}); len(got.Pages) != 1 || len(got.Facts) != 1 {
		t.Fatalf("before delete: %d pages, %d facts; want 1 and 1", len(got.Pages), len(got.Facts))
	}
	if err := a.ForgetScope(ctx, memory.DefaultUserID, ""); err != nil {
		t.Fatal(err)
	}
	got, err := b.Retrieve(ctx, memory.RetrieveRequest{Query: "secret word"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != 0 || len(got.Facts) != 0 || strings.Contains(got.Injection, "zebra") {
		t.Errorf("after delete in another service: %d pages, %d facts, injection %q; want nothing", len(got.Pages), len(got.Facts), got.Injection)
	}
}

// TestUpdateAfterForgetInOtherProcess: when another process forgets the
// thread (or the whole scope) while an update of it waits for the model,
// the update's reply is not saved: it was drawn from forgotten turns.
func TestUpdateAfterForgetInOtherProcess(t *testing.T) {
	for _, whole := range []bool{false, true} {
		store := newMemStore()
		other := newTestService(t, store, memory.DefaultConfig())
		var forgetErr error
		llm := llmFunc(func() (string, error) {
			if whole {
				forgetErr = other.ForgetScope(context.Background(), memory.DefaultUserID, "")
			} else {
				_, forgetErr = other.Forget(context.Background(), memory.ForgetRequest{ThreadID: "t"})
			}
			return `{"newFacts":[{"content":"Has a zebra locker","category":"context","confidence":0.9}],"factsToRemove":[]}`, nil
		})
		s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
		t.Cleanup(func() { s.queue.close(t.Context()) })
		addPair(t, s, "t", "my locker has a zebra sticker", "ok")
		s.Flush(t.Context(), memory.FlushRequest{ThreadID: "t"})
		if forgetErr != nil {
			t.Fatalf("forget in the other service: %v", forgetErr)
		}
		doc, err := store.LoadDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Facts) != 0 {
			t.Errorf("whole scope %v: facts after the forget = %+v; want none from the forgotten turns", whole, doc.Facts)
		}
	}
}
