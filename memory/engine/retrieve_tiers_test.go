package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

func TestRetrieveReturnsSessionsAndCountsVisits(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	s, _ := newTierService(t, cfg)
	for i := range 4 {
		addPair(t, s, "t", fmt.Sprintf("kyoto trip cherry blossom temple plan %d", i), "kyoto temple cherry blossom")
	}
	addPair(t, s, "t", "postgres vacuum replica planner", "postgres vacuum schema")
	if _, err := s.store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
		d.Knowledge = []memory.Fact{{ID: "fact_00000101", Content: "Is planning a Kyoto trip in April", Category: memory.CategoryKnowledge}, {ID: "fact_00000102", Content: "Owns a bicycle", Category: memory.CategoryKnowledge}}
		d.AssistantKnowledge = []memory.Fact{{ID: "fact_00000103", Content: "The assistant suggested the Kyoto temple pass", Category: memory.CategoryKnowledge}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto temple"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 || res.Sessions[0].Summary == "" || len(res.Sessions[0].PageIDs) == 0 {
		t.Fatalf("Sessions = %+v, want the Kyoto session with its summary and pages", res.Sessions)
	}
	if len(res.UserKnowledge) != 1 || res.UserKnowledge[0].ID != "fact_00000101" || len(res.AssistantKnowledge) != 1 {
		t.Errorf("knowledge = %+v / %+v, want the Kyoto entries only", res.UserKnowledge, res.AssistantKnowledge)
	}
	v, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ses := range v.Sessions {
		if ses.ID == res.Sessions[0].ID && ses.Visits != 1 {
			t.Errorf("session visits = %d after one retrieval, want 1", ses.Visits)
		}
	}
}

// TestRetrievalVisitAnalysesRightAway checks that a retrieval that makes
// a session hot starts its analysis at once, without waiting for the
// thread's debounced update, and that a failing model is not asked again
// on every retrieval.
func TestRetrievalVisitAnalysesRightAway(t *testing.T) {
	var down atomic.Bool
	llm := &tierLLM{complete: func(p string) (string, error) {
		if down.Load() {
			return "", errors.New("model unavailable")
		}
		if isAnalysisPrompt(p) {
			return `{"userKnowledge":["Is planning a Kyoto trip"]}`, nil
		}
		return `{"newFacts":[]}`, nil
	}}
	s, _ := hotSession(t, llm)
	if _, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto temple"}); err != nil {
		t.Fatal(err)
	}
	s.queue.running.Wait()
	var kinds []string
	for _, p := range llm.sent() {
		switch {
		case isUpdatePrompt(p):
			kinds = append(kinds, "update")
		case isAnalysisPrompt(p):
			kinds = append(kinds, "analysis")
		default:
			kinds = append(kinds, "other")
		}
	}
	if want := []string{"analysis"}; !slices.Equal(kinds, want) {
		t.Errorf("prompts = %v, want %v (the update stays debounced)", kinds, want)
	}
	if v := sessionView(t, s); v.Visits != 0 || v.Analyzed != 3 {
		t.Errorf("session = %+v, want analysed with visits reset", v)
	}
	prof, err := s.Profile(t.Context(), memory.ProfileRequest{IncludeKnowledge: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Knowledge) != 1 || prof.Knowledge[0].Content != "Is planning a Kyoto trip" {
		t.Errorf("knowledge = %+v, want the analysed entry", prof.Knowledge)
	}

	// A session hot again while the model is down: one failed attempt,
	// then retrievals do not ask again until the backoff has passed.
	down.Store(true)
	addPair(t, s, "t", "kyoto trip cherry blossom temple plan 9", "kyoto temple cherry blossom")
	var asking []int // retrievals during which the model was asked
	for i := range 8 {
		before := len(llm.sent())
		if _, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto temple"}); err != nil {
			t.Fatal(err)
		}
		s.queue.running.Wait()
		if len(llm.sent()) > before {
			asking = append(asking, i)
		}
	}
	if len(asking) != 1 {
		t.Errorf("model asked during retrievals %v of 8 while down, want exactly one", asking)
	}
}

// TestRetrieveRanksSessionsThenPages checks that the sessions come back
// best first, each with its pages among the retrieved ones, that the
// pages of the best session lead the page list, and that the injection
// text shows knowledge and the pages under their topics.
func TestRetrieveRanksSessionsThenPages(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	s, clock := newTierService(t, cfg)
	for i := range 3 {
		addPair(t, s, "t", fmt.Sprintf("kyoto trip cherry blossom temple plan %d", i), "kyoto temple cherry blossom")
		clock.add(time.Minute)
	}
	clock.add(3 * time.Hour)
	for i := range 3 {
		addPair(t, s, "t", fmt.Sprintf("postgres vacuum replica planner question %d", i), "run vacuum on the replica after the migration")
		clock.add(time.Minute)
	}
	clock.add(3 * time.Hour)
	addPair(t, s, "t", "unrelated closing words", "bye")
	if _, err := s.store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
		d.Knowledge = []memory.Fact{{ID: "fact_00000101", Content: "Runs postgres with one replica", Category: memory.CategoryKnowledge}}
		d.AssistantKnowledge = []memory.Fact{{ID: "fact_00000102", Content: "The assistant promised a vacuum checklist", Category: memory.CategoryKnowledge}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "postgres vacuum on the replica", MaxResults: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) < 2 {
		t.Fatalf("Sessions = %+v, want the postgres and the kyoto sessions", res.Sessions)
	}
	if res.Sessions[0].Score != 1 || res.Sessions[0].PageCount != 3 {
		t.Errorf("first session = %+v, want the postgres session (score 1, 3 pages)", res.Sessions[0])
	}
	for i := 1; i < len(res.Sessions); i++ {
		if res.Sessions[i].Score > res.Sessions[i-1].Score {
			t.Errorf("sessions not best first: %+v", res.Sessions)
		}
	}
	pageIDs := make([]string, len(res.Pages))
	for i, p := range res.Pages {
		pageIDs[i] = p.ID
	}
	for _, ses := range res.Sessions {
		for _, id := range ses.PageIDs {
			if !slices.Contains(pageIDs, id) {
				t.Errorf("session %s lists page %s that was not retrieved", ses.ID, id)
			}
		}
	}
	for i, p := range res.Pages[:3] {
		if !strings.Contains(p.User, "postgres") {
			t.Errorf("page %d = %q, want the postgres session's pages first", i, p.User)
		}
	}
	for _, want := range []string{recall.SectionHeadings[recall.SecKnowledge], "Runs postgres with one replica", recall.SectionHeadings[recall.SecAssistant], "vacuum checklist", recall.SectionHeadings[recall.SecPages]} {
		if !strings.Contains(res.Injection, want) {
			t.Errorf("injection lacks %q:\n%s", want, res.Injection)
		}
	}
}

func TestRetrievedPagesLinkToTheirNeighbours(t *testing.T) {
	s, _ := newTierService(t, memory.DefaultConfig())
	var ids []string
	for _, u := range []string{"we planted tomatoes", "the greenhouse heater broke", "bought basil seeds"} {
		res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "garden", UserInput: u, AgentResponse: "ok"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.TurnIDs...)
	}
	addPair(t, s, "other", "greenhouse talk elsewhere", "ok")
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "greenhouse heater"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) == 0 || res.Pages[0].ID != ids[1] {
		t.Fatalf("pages = %+v, want the heater exchange first", res.Pages)
	}
	if p := res.Pages[0]; p.PrevID != ids[0] || p.NextID != ids[2] {
		t.Errorf("neighbours = %q, %q; want %q, %q", p.PrevID, p.NextID, ids[0], ids[2])
	}
}
