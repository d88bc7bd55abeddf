package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestFlushPlacesPagesInMidTerm: flush_memory places the exchanges that
// left their thread's short-term window into mid-term sessions, so that
// the retrieval after it (the first of a conversation after an import)
// finds the scope ready to rank and does not do that work itself.
func TestFlushPlacesPagesInMidTerm(t *testing.T) {
	ctx := context.Background()
	cfg := memory.DefaultConfig()
	s := newTestService(t, newMemStore(), cfg)
	for i := range cfg.ShortTermCapacity + 5 {
		req := memory.AddRequest{ThreadID: "t1", UserInput: fmt.Sprintf("I planted tomato row %d", i), AgentResponse: "Noted."}
		if _, err := s.Add(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	scope, err := s.resolveScope("", "")
	if err != nil {
		t.Fatal(err)
	}
	ready := func() bool {
		st := s.state(scope)
		st.mu.RLock()
		defer st.mu.RUnlock()
		return s.readyToRank(st)
	}
	if ready() {
		t.Fatal("the scope is ready to rank before any retrieval or flush: the test no longer tests the flush")
	}
	if _, err := s.Flush(ctx, memory.FlushRequest{}); err != nil {
		t.Fatal(err)
	}
	if !ready() {
		t.Fatal("after flush_memory the scope still needs its pages placed before a retrieval can rank it")
	}
	st := s.state(scope)
	st.mu.RLock()
	placed := 0
	for _, ses := range st.midTerm.Sessions {
		placed += len(ses.Pages)
	}
	st.mu.RUnlock()
	if placed != 5 {
		t.Errorf("mid-term sessions hold %d pages after flush, want the 5 out of the short-term window", placed)
	}
}
