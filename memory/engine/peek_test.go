package engine

import (
	"fmt"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A peek ranks as a retrieval does, with the same sessions, but counts no
// visit: no heat changes and no analysis is due.
func TestRetrievePeekCountsNoVisit(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	s, _ := newTierService(t, cfg)
	for i := range 4 {
		addPair(t, s, "t", fmt.Sprintf("kyoto trip cherry blossom temple plan %d", i), "kyoto temple cherry blossom")
	}
	addPair(t, s, "t", "postgres vacuum replica planner", "postgres vacuum schema")
	visits := func() int {
		t.Helper()
		v, err := s.MidTerm(t.Context(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ses := range v.Sessions {
			n += ses.Visits
		}
		return n
	}
	before := visits()
	peek, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto temple", Peek: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(peek.Sessions) != 1 || len(peek.Sessions[0].PageIDs) == 0 {
		t.Fatalf("Retrieve(Peek) sessions = %+v, want the Kyoto session with its pages", peek.Sessions)
	}
	if got := visits(); got != before {
		t.Errorf("visits after a peek = %d, want %d", got, before)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto temple"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Injection != peek.Injection {
		t.Errorf("a peek injects\n%s\nand a retrieval\n%s\nwant the same", peek.Injection, res.Injection)
	}
	if got := visits(); got != before+1 {
		t.Errorf("visits after a retrieval = %d, want %d (else the test proves nothing)", got, before+1)
	}
}
