package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// fakeLLM is a scripted model: reply decides the answer to each prompt.
type fakeLLM struct {
	mu      sync.Mutex
	prompts []string
	reply   func(prompt string) (string, error)
	// block, when set, is waited on before answering.
	block chan struct{}
}

func (f *fakeLLM) Complete(ctx context.Context, req memory.CompletionRequest) (memory.Completion, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, req.Prompt)
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return memory.Completion{}, ctx.Err()
		}
	}
	text, err := f.reply(req.Prompt)
	return memory.Completion{Text: text, PromptTokens: len(req.Prompt) / 4}, err
}

func (f *fakeLLM) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prompts...)
}

// factReply answers with one fact naming the prompt's marker.
func factReply(content string) string {
	return fmt.Sprintf(`{"user":{"workContext":{"summary":"Works on mnemo.","shouldUpdate":true}},"history":{},"newFacts":[{"content":%q,"category":"context","confidence":0.9}],"factsToRemove":[]}`, content)
}

func addPair(t *testing.T, s *Service, thread, user, reply string) {
	t.Helper()
	if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: user, AgentResponse: reply}); err != nil {
		t.Fatalf("Add() = %v", err)
	}
}

func TestQueueDebouncesOneThreadIntoOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("User builds mnemo"), nil }}
		store := newMemStore()
		s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
		defer s.Close(context.Background())
		for i := range 20 {
			msg := fmt.Sprintf("exchange number %d", i)
			if i == 7 {
				msg = "that's wrong, I meant Go"
			}
			addPair(t, s, "t1", msg, "ok")
			time.Sleep(time.Second) // inside the bubble: fake time, well under the 30 s window
		}
		synctest.Wait()
		if n := len(llm.calls()); n != 0 {
			t.Fatalf("LLM called %d times inside the debounce window, want 0", n)
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		// The ten exchanges that left the short-term window form a hot
		// mid-term session, summarised and analysed in the same run: count
		// the updater's calls only.
		calls := updatePrompts(llm.calls())
		if len(calls) != 1 {
			t.Fatalf("LLM called %d times for updates, want 1", len(calls))
		}
		for i := range 20 {
			if i != 7 && !strings.Contains(calls[0], fmt.Sprintf("exchange number %d\n", i)) {
				t.Errorf("prompt lacks exchange %d", i)
			}
		}
		if !strings.Contains(calls[0], "that's wrong, I meant Go") {
			t.Errorf("prompt lacks the correction exchange")
		}
		prof, err := s.Profile(t.Context(), memory.ProfileRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(prof.Facts) != 1 || prof.Pending.Turns != 0 {
			t.Errorf("after update: facts %v pending %d, want 1 fact and nothing pending", prof.Facts, prof.Pending.Turns)
		}
	})
}

func TestQueueSeparateThreadsSeparateUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		llm := &fakeLLM{reply: func(p string) (string, error) {
			if strings.Contains(p, "beta one") {
				return factReply("beta fact"), nil
			}
			return factReply("alpha fact"), nil
		}}
		s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithLLM(llm))
		defer s.Close(context.Background())
		addPair(t, s, "a", "alpha one", "ok")
		addPair(t, s, "b", "beta one", "ok")
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if n := len(llm.calls()); n != 2 {
			t.Fatalf("LLM called %d times, want 2 (one per thread)", n)
		}
		prof, _ := s.Profile(t.Context(), memory.ProfileRequest{})
		if len(prof.Facts) != 2 {
			t.Errorf("facts = %v, want 2", prof.Facts)
		}
	})
}

func TestFlushDuringRunningUpdateIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		llm := &fakeLLM{block: block, reply: func(p string) (string, error) {
			if strings.Contains(p, "second") {
				return factReply("second fact"), nil
			}
			return factReply("first fact"), nil
		}}
		s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithLLM(llm))
		defer s.Close(context.Background())
		addPair(t, s, "t", "first exchange", "ok")
		time.Sleep(31 * time.Second) // the background update starts and blocks in the LLM
		synctest.Wait()
		addPair(t, s, "t", "second exchange", "ok")
		var res *memory.FlushResult
		var ferr error
		done := make(chan struct{})
		go func() {
			res, ferr = s.Flush(context.Background(), memory.FlushRequest{})
			close(done)
		}()
		synctest.Wait()
		close(block) // let the running update and then the flush finish
		<-done
		if ferr != nil {
			t.Fatalf("Flush() = %v", ferr)
		}
		if res.Pending.Turns != 0 {
			t.Errorf("Flush() left %d pending, want 0 (%s)", res.Pending.Turns, res.Reason)
		}
		prof, _ := s.Profile(t.Context(), memory.ProfileRequest{})
		if len(prof.Facts) != 2 {
			t.Errorf("facts = %+v, want both updates applied", prof.Facts)
		}
	})
}

func TestUpdateFailureLeavesMemoryAndTurnsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fail := true
		var mu sync.Mutex
		llm := &fakeLLM{reply: func(string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return `{"user": {"workContext": {"summary": "trunc`, nil
			}
			return factReply("recovered fact"), nil
		}}
		store := newMemStore()
		s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
		defer s.Close(context.Background())
		addPair(t, s, "t", "I live in Lyon", "noted")
		res, err := s.Flush(t.Context(), memory.FlushRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Pending.Turns != 1 || !strings.Contains(res.Reason, "parse") {
			t.Errorf("Flush() pending %d reason %q, want 1 pending and a parse reason", res.Pending.Turns, res.Reason)
		}
		if store.saves != 0 {
			t.Errorf("a failed update saved the document %d times", store.saves)
		}
		mu.Lock()
		fail = false
		mu.Unlock()
		time.Sleep(2 * time.Minute) // the background retry runs
		synctest.Wait()
		prof, _ := s.Profile(t.Context(), memory.ProfileRequest{})
		if len(prof.Facts) != 1 || prof.Pending.Turns != 0 {
			t.Errorf("after recovery: facts %v pending %d", prof.Facts, prof.Pending.Turns)
		}
	})
}

func TestFlushWithoutLLMIsHonest(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	addPair(t, s, "t", "hello", "hi")
	res, err := s.Flush(t.Context(), memory.FlushRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.TurnsProcessed != 0 || res.Pending.Turns != 1 || !strings.Contains(res.Reason, "no LLM") {
		t.Errorf("Flush() = %+v, want nothing processed, 1 pending, a no-LLM reason", res)
	}
}

func TestStartResumesPendingTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		first := newTestService(t, store, memory.DefaultConfig()) // no LLM: turns stay pending
		addPair(t, first, "t", "I moved to Berlin", "nice")
		first.Close(context.Background())

		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("User lives in Berlin"), nil }}
		second := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
		defer second.Close(context.Background())
		if err := second.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if n := len(llm.calls()); n != 1 {
			t.Fatalf("LLM called %d times after restart, want 1", n)
		}
		// Processing again must not happen: the watermark moved.
		res, _ := second.Flush(t.Context(), memory.FlushRequest{})
		if res.TurnsProcessed != 0 || len(llm.calls()) != 1 {
			t.Errorf("turns processed twice: %+v", res)
		}
	})
}

func TestCloseRunsPendingWithinGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		llm := &fakeLLM{reply: func(string) (string, error) { return factReply("fact at shutdown"), nil }}
		store := newMemStore()
		s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
		addPair(t, s, "t", "remember this", "ok")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
		if store.saves != 1 {
			t.Errorf("Close() saved %d times, want the pending update run once", store.saves)
		}
	})
}

var _ = errors.New

// TestPendingCountsStayExact checks the cached pending counts against a
// full recount after every step of a random mix of adds to many threads,
// flushes of one thread and of all, and a second service writing to the
// same store.
func TestPendingCountsStayExact(t *testing.T) {
	llm := &fakeLLM{reply: func(string) (string, error) { return factReply("User keeps a garden"), nil }}
	store := newMemStore()
	s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
	defer s.Close(context.Background())
	other := newTestService(t, store, memory.DefaultConfig())
	r := rand.New(rand.NewPCG(5, 5))
	scope := memory.Scope{UserID: memory.DefaultUserID}
	for step := range 300 {
		thread := fmt.Sprint("t", r.IntN(25))
		var err error
		switch k := r.IntN(20); {
		case k == 0:
			_, err = s.Flush(t.Context(), memory.FlushRequest{ThreadID: thread})
		case k == 1:
			_, err = s.Flush(t.Context(), memory.FlushRequest{})
		case k < 5:
			_, err = other.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: "from the other process", AgentResponse: "ok"})
		default:
			_, err = s.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: fmt.Sprint("step ", step), AgentResponse: "ok"})
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.loadedState(t.Context(), scope)
		if err != nil {
			t.Fatal(err)
		}
		c := st.pendingCounts()
		gotTotal, got, gotTop := c.total, maps.Clone(c.count), slices.Clone(c.top)
		wantTotal, want := st.countPending()
		st.mu.Unlock()
		if gotTotal != wantTotal || !maps.Equal(got, want) {
			t.Fatalf("step %d: cached pending %d %v, recount %d %v", step, gotTotal, got, wantTotal, want)
		}
		// The busiest list is the head of every thread ranked by pending
		// turns, then id.
		var all []threadCount
		for id, n := range want {
			all = append(all, threadCount{id, n})
		}
		slices.SortFunc(all, func(a, b threadCount) int {
			if a.above(b) {
				return -1
			}
			return 1
		})
		if wantTop := all[:min(len(all), maxPendingThreads+1)]; !slices.Equal(gotTop, wantTop) {
			t.Fatalf("step %d: busiest threads %v, want %v", step, gotTop, wantTop)
		}
	}
}
