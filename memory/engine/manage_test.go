package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

var manageNow = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// newManageService returns a Service over a file store in dir (a new
// Store each call, as a second process would have), with no LLM, a fixed
// clock and sequential fact ids.
func newManageService(t *testing.T, dir string, opts ...engine.Option) *engine.Service {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var mu sync.Mutex
	n := 0
	cfg := memory.DefaultConfig()
	cfg.MaxFacts = 5
	svc := engine.NewTestService(t, store, cfg, append([]engine.Option{
		engine.WithClock(func() time.Time { return manageNow }),
		engine.WithFactIDs(func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("fact_%08x", n)
		}),
	}, opts...)...)
	return svc
}

func mustSave(t *testing.T, s *engine.Service, req memory.SaveFactRequest) *memory.SaveFactResult {
	t.Helper()
	res, err := s.SaveFact(t.Context(), req)
	if err != nil {
		t.Fatalf("SaveFact(%+v) error = %v", req, err)
	}
	return res
}

func mustAdd(t *testing.T, s *engine.Service, user, thread, in, out string) {
	t.Helper()
	if _, err := s.Add(t.Context(), memory.AddRequest{UserID: user, ThreadID: thread, UserInput: in, AgentResponse: out}); err != nil {
		t.Fatalf("Add() error = %v", err)
	}
}

func TestSaveFact(t *testing.T) {
	var changed []string
	s := newManageService(t, t.TempDir(), engine.WithChangeHook(func(sc memory.Scope) { changed = append(changed, sc.Key()) }))
	ctx := t.Context()
	res := mustSave(t, s, memory.SaveFactRequest{Content: "  Prefers Go over Python. "})
	f := res.Fact
	if res.Duplicate || f.ID != "fact_00000001" || f.Content != "Prefers Go over Python." || f.Category != memory.CategoryContext ||
		f.Confidence != memory.DefaultManualConfidence || f.Source != memory.SourceManual || !f.CreatedAt.Equal(manageNow) {
		t.Errorf("SaveFact() = %+v, want a new manual context fact with the defaults", res)
	}
	if res.Scope.UserID != memory.DefaultUserID {
		t.Errorf("scope = %v, want the default user", res.Scope)
	}
	dup := mustSave(t, s, memory.SaveFactRequest{Content: "prefers  go over python", Category: "preference"})
	if !dup.Duplicate || dup.Fact.ID != f.ID {
		t.Errorf("SaveFact(same content) = %+v, want the stored fact as a duplicate", dup)
	}
	if got := mustSave(t, s, memory.SaveFactRequest{UserID: "bob", Content: "Prefers Go over Python"}); got.Duplicate {
		t.Errorf("a fact of another user counted as a duplicate")
	}
	if want := []string{"default", "bob"}; !slices.Equal(changed, want) {
		t.Errorf("change hook calls = %v, want %v (none for the duplicate)", changed, want)
	}
	prof, err := s.Profile(ctx, memory.ProfileRequest{})
	if err != nil || len(prof.Facts) != 1 {
		t.Fatalf("Profile() = %d facts, %v; want 1", len(prof.Facts), err)
	}

	// max_facts (5): a low-confidence fact is not kept; a high one evicts.
	for i := range 4 {
		mustSave(t, s, memory.SaveFactRequest{Content: fmt.Sprintf("fact number %d", i), Confidence: 0.8})
	}
	if _, err := s.SaveFact(ctx, memory.SaveFactRequest{Content: "weak", Confidence: 0.1}); !errors.Is(err, memory.ErrInvalidInput) || !strings.Contains(err.Error(), "maximum of 5") {
		t.Errorf("SaveFact(over max, low confidence) error = %v, want one about max facts", err)
	}
	strong := mustSave(t, s, memory.SaveFactRequest{Content: "strong", Confidence: 1})
	if len(strong.Evicted) != 1 {
		t.Errorf("SaveFact(over max, high confidence) evicted %v, want one fact", strong.Evicted)
	}
	h, err := s.FactHistory(ctx, memory.HistoryRequest{FactID: strong.Evicted[0]})
	if err != nil || len(h.Events) != 2 || h.Events[1].Event != memory.FactRemoved || !strings.Contains(h.Events[1].Reason, "over the limit") || h.Current != nil {
		t.Errorf("history of the evicted fact = %+v, %v; want created then removed over the limit", h, err)
	}
}

func TestSaveFactBadInput(t *testing.T) {
	s := newManageService(t, t.TempDir())
	tests := []struct {
		req  memory.SaveFactRequest
		want string
	}{
		{memory.SaveFactRequest{Content: "  "}, "content: is empty"},
		{memory.SaveFactRequest{Content: strings.Repeat("x", 2001)}, "under 2000"},
		{memory.SaveFactRequest{Content: "The user uploaded a file report.pdf."}, "uploaded file"},
		{memory.SaveFactRequest{Content: "ok", Category: "hobby"}, "use one of preference"},
		{memory.SaveFactRequest{Content: "ok", Confidence: 1.5}, "between 0 and 1"},
		{memory.SaveFactRequest{Content: "ok", UserID: "../etc"}, "user_id"},
		{memory.SaveFactRequest{Content: "ok", Source: "rollback"}, "source"},
	}
	for _, tt := range tests {
		_, err := s.SaveFact(t.Context(), tt.req)
		if !errors.Is(err, memory.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SaveFact(%+v) error = %v, want ErrInvalidInput saying %q", tt.req, err, tt.want)
		}
	}
}

func TestUpdateFact(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	a := mustSave(t, s, memory.SaveFactRequest{Content: "Lives in Paris"}).Fact
	b := mustSave(t, s, memory.SaveFactRequest{Content: "Has a cat"}).Fact
	content, cat, conf := "Lives in Lyon", "knowledge", 0.95
	res, err := s.UpdateFact(ctx, memory.UpdateFactRequest{ID: a.ID, Content: &content, Category: &cat, Confidence: &conf})
	if err != nil {
		t.Fatalf("UpdateFact() error = %v", err)
	}
	if res.Fact.Content != content || res.Fact.Category != cat || res.Fact.Confidence != conf || res.Fact.ID != a.ID ||
		!res.Fact.CreatedAt.Equal(a.CreatedAt) || res.Previous.Content != "Lives in Paris" || len(res.Changed) != 3 {
		t.Errorf("UpdateFact() = %+v", res)
	}
	again, err := s.UpdateFact(ctx, memory.UpdateFactRequest{ID: a.ID, Content: &content})
	if err != nil || len(again.Changed) != 0 {
		t.Errorf("UpdateFact(same content) = %+v, %v; want no change", again, err)
	}
	h, err := s.FactHistory(ctx, memory.HistoryRequest{FactID: a.ID})
	if err != nil || len(h.Events) != 2 || h.Events[0].Event != memory.FactCreated || h.Events[1].Event != memory.FactUpdated ||
		h.Events[1].Content != content || h.Current == nil || h.Current.Content != content {
		t.Errorf("FactHistory() = %+v, %v; want created then updated", h, err)
	}

	dupContent := "has a cat."
	missing, empty, zero := "fact_ffffffff", "", 0.0
	tests := []struct {
		req  memory.UpdateFactRequest
		is   error
		want string
	}{
		{memory.UpdateFactRequest{ID: missing, Content: &content}, memory.ErrNotFound, "list_memories"},
		{memory.UpdateFactRequest{UserID: "bob", ID: a.ID, Content: &content}, memory.ErrNotFound, "bob"},
		{memory.UpdateFactRequest{ID: a.ID}, memory.ErrInvalidInput, "nothing to change"},
		{memory.UpdateFactRequest{Content: &content}, memory.ErrInvalidInput, "id: is empty"},
		{memory.UpdateFactRequest{ID: a.ID, Content: &dupContent}, memory.ErrInvalidInput, b.ID + " already says this"},
		{memory.UpdateFactRequest{ID: a.ID, Category: &empty}, memory.ErrInvalidInput, "category"},
		{memory.UpdateFactRequest{ID: a.ID, Confidence: &zero}, memory.ErrInvalidInput, "forget it"},
	}
	for _, tt := range tests {
		_, err := s.UpdateFact(ctx, tt.req)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("UpdateFact(%+v) error = %v, want %v saying %q", tt.req, err, tt.is, tt.want)
		}
	}
}

func TestForgetFacts(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	a := mustSave(t, s, memory.SaveFactRequest{Content: "Likes tea"}).Fact
	bobs := mustSave(t, s, memory.SaveFactRequest{UserID: "bob", Content: "Likes tea"}).Fact
	res, err := s.Forget(ctx, memory.ForgetRequest{FactIDs: []string{a.ID, "fact_99999999"}})
	if err != nil {
		t.Fatalf("Forget() error = %v", err)
	}
	if len(res.FactsRemoved) != 1 || res.FactsRemoved[0].ID != a.ID || !slices.Equal(res.NotFound, []string{"fact_99999999"}) {
		t.Errorf("Forget() = %+v, want %s removed and the other not found", res, a.ID)
	}
	if _, err := s.Forget(ctx, memory.ForgetRequest{FactIDs: []string{a.ID}}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Forget(again) error = %v, want ErrNotFound", err)
	}
	prof, _ := s.Profile(ctx, memory.ProfileRequest{UserID: "bob"})
	if len(prof.Facts) != 1 || prof.Facts[0].ID != bobs.ID {
		t.Errorf("bob's facts = %+v after forgetting the default user's fact; want his untouched", prof.Facts)
	}
	h, err := s.FactHistory(ctx, memory.HistoryRequest{FactID: a.ID})
	if err != nil || len(h.Events) != 2 || h.Events[1].Event != memory.FactRemoved || h.Current != nil {
		t.Errorf("history of the forgotten fact = %+v, %v", h, err)
	}
	if _, err := s.FactHistory(ctx, memory.HistoryRequest{FactID: "fact_12345678"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("FactHistory(unknown) error = %v, want ErrNotFound", err)
	}
	latest, err := s.FactHistory(ctx, memory.HistoryRequest{Limit: 1})
	if err != nil || len(latest.Events) != 1 || latest.Total != 2 || latest.Events[0].Event != memory.FactRemoved {
		t.Errorf("FactHistory(latest 1) = %+v, %v; want the removal", latest, err)
	}
}

func TestForgetValidation(t *testing.T) {
	s := newManageService(t, t.TempDir())
	tests := []struct {
		req  memory.ForgetRequest
		want string
	}{
		{memory.ForgetRequest{}, "nothing to forget"},
		{memory.ForgetRequest{AllOfScope: true}, `"forget everything"`},
		{memory.ForgetRequest{AllOfScope: true, Confirm: "yes"}, `"forget everything"`},
		{memory.ForgetRequest{AllOfScope: true, Confirm: memory.ForgetEverything, FactIDs: []string{"x"}}, "whole scope"},
		{memory.ForgetRequest{FactIDs: []string{"x"}, Confirm: memory.ForgetEverything}, "only for forgetting a whole scope"},
		{memory.ForgetRequest{ThreadID: "a/b"}, "thread_id"},
		{memory.ForgetRequest{FactIDs: []string{""}}, "fact_ids"},
	}
	for _, tt := range tests {
		_, err := s.Forget(t.Context(), tt.req)
		if !errors.Is(err, memory.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Forget(%+v) error = %v, want ErrInvalidInput saying %q", tt.req, err, tt.want)
		}
	}
}

// TestForgetThreadAcrossServices checks that a forgotten thread leaves
// retrieval in the Service that forgot it and in a second Service (its own
// Store) over the same directory that had already loaded the scope.
func TestForgetThreadAcrossServices(t *testing.T) {
	dir := t.TempDir()
	one := newManageService(t, dir)
	two := newManageService(t, dir)
	ctx := t.Context()
	mustAdd(t, one, "", "secret", "My locker code is zebra-4471", "Noted.")
	mustAdd(t, one, "", "secret", "And the zebra sticker is blue", "Nice.")
	mustAdd(t, one, "", "trip", "Planning a zebra safari in Kenya", "Fun!")
	mustAdd(t, one, "bob", "secret", "Bob's zebra notes", "ok")
	query := memory.RetrieveRequest{Query: "zebra"}
	for _, s := range []*engine.Service{one, two} {
		if got, err := s.Retrieve(ctx, query); err != nil || len(got.Pages) != 3 {
			t.Fatalf("Retrieve() before forget = %d pages, %v; want 3", len(got.Pages), err)
		}
	}
	res, err := one.Forget(ctx, memory.ForgetRequest{ThreadID: "secret"})
	if err != nil {
		t.Fatalf("Forget(thread) error = %v", err)
	}
	if len(res.TurnsRemoved) != 2 || res.TurnsRemoved[0].ThreadID != "secret" {
		t.Errorf("Forget(thread) = %+v, want the thread's 2 turns", res)
	}
	for name, s := range map[string]*engine.Service{"same": one, "second": two} {
		got, err := s.Retrieve(ctx, query)
		if err != nil {
			t.Fatalf("%s: Retrieve() error = %v", name, err)
		}
		if len(got.Pages) != 1 || !strings.Contains(got.Pages[0].User, "safari") || strings.Contains(got.Injection, "4471") {
			t.Errorf("%s service: pages after forget = %+v; want only the safari", name, got.Pages)
		}
		if got.StoredTurns != 1 {
			t.Errorf("%s service: stored_turns = %d, want 1", name, got.StoredTurns)
		}
		bob, err := s.Retrieve(ctx, memory.RetrieveRequest{UserID: "bob", Query: "zebra"})
		if err != nil || len(bob.Pages) != 1 {
			t.Errorf("%s service: bob's pages = %d, %v; want his one turn untouched", name, len(bob.Pages), err)
		}
	}
	// New exchanges after the forget are found by both.
	mustAdd(t, two, "", "later", "A zebra crossing outside", "Careful.")
	for name, s := range map[string]*engine.Service{"same": one, "second": two} {
		if got, _ := s.Retrieve(ctx, query); len(got.Pages) != 2 {
			t.Errorf("%s service: %d pages after a new turn, want 2", name, len(got.Pages))
		}
	}
	// Forgetting a turn by id.
	list, err := one.List(ctx, memory.ListRequest{Kind: memory.ListTurns, ThreadID: "later"})
	if err != nil || len(list.Turns) != 1 {
		t.Fatalf("List(turns of later) = %+v, %v", list, err)
	}
	if _, err := two.Forget(ctx, memory.ForgetRequest{TurnIDs: []string{list.Turns[0].ID}}); err != nil {
		t.Fatalf("Forget(turn id) error = %v", err)
	}
	if got, _ := one.Retrieve(ctx, query); len(got.Pages) != 1 {
		t.Errorf("pages after forgetting a turn by id = %d, want 1", len(got.Pages))
	}
	if _, err := one.Forget(ctx, memory.ForgetRequest{ThreadID: "secret"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Forget(forgotten thread) error = %v, want ErrNotFound", err)
	}
}

func TestForgetAllOfScope(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	mustAdd(t, s, "alice", "t", "hello there", "hi")
	mustSave(t, s, memory.SaveFactRequest{UserID: "alice", Content: "Is Alice"})
	mustSave(t, s, memory.SaveFactRequest{UserID: "alicia", Content: "Is Alicia"})
	res, err := s.Forget(ctx, memory.ForgetRequest{UserID: "alice", AllOfScope: true, Confirm: memory.ForgetEverything})
	if err != nil || !res.ScopeForgotten {
		t.Fatalf("Forget(all) = %+v, %v", res, err)
	}
	prof, _ := s.Profile(ctx, memory.ProfileRequest{UserID: "alice"})
	if !prof.Empty || prof.StoredTurns != 0 {
		t.Errorf("alice after forget all = %+v, want empty", prof)
	}
	if prof, _ := s.Profile(ctx, memory.ProfileRequest{UserID: "alicia"}); len(prof.Facts) != 1 {
		t.Errorf("alicia lost her facts when alice was forgotten")
	}
}

func TestList(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	mustSave(t, s, memory.SaveFactRequest{Content: "Likes green tea", Category: "preference", Confidence: 0.8})
	mustSave(t, s, memory.SaveFactRequest{Content: "Works at Acme", Category: "context", Confidence: 0.95})
	mustSave(t, s, memory.SaveFactRequest{Content: "Wants to learn Rust", Category: "goal", Confidence: 0.9})
	for i := range 5 {
		mustAdd(t, s, "", fmt.Sprintf("th%d", i%2), fmt.Sprintf("question %d about tea", i), "answer")
	}
	tests := []struct {
		name  string
		req   memory.ListRequest
		total int
		n     int
		next  int
	}{
		{"all facts", memory.ListRequest{}, 3, 3, 0},
		{"category", memory.ListRequest{Category: "goal"}, 1, 1, 0},
		{"min confidence", memory.ListRequest{MinConfidence: 0.9}, 2, 2, 0},
		{"text", memory.ListRequest{Text: "TEA"}, 1, 1, 0},
		{"page", memory.ListRequest{Limit: 2}, 3, 2, 2},
		{"last page", memory.ListRequest{Limit: 2, Offset: 2}, 3, 1, 0},
		{"past the end", memory.ListRequest{Offset: 10}, 3, 0, 0},
		{"since", memory.ListRequest{Since: "2025-06-02"}, 0, 0, 0},
		{"turns", memory.ListRequest{Kind: "turns"}, 5, 5, 0},
		{"turns of a thread", memory.ListRequest{Kind: "turns", ThreadID: "th1", Limit: 1}, 2, 1, 1},
		{"turns text", memory.ListRequest{Kind: "turns", Text: "question 3"}, 1, 1, 0},
		{"threads", memory.ListRequest{Kind: "threads"}, 2, 2, 0},
		{"other user", memory.ListRequest{UserID: "bob"}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.List(ctx, tt.req)
			if err != nil {
				t.Fatalf("List() error = %v", err)
			}
			n := len(res.Facts) + len(res.Turns) + len(res.Threads)
			if res.Total != tt.total || n != tt.n || res.NextOffset != tt.next {
				t.Errorf("List() total %d, %d items, next %d; want %d, %d, %d", res.Total, n, res.NextOffset, tt.total, tt.n, tt.next)
			}
		})
	}
	res, _ := s.List(ctx, memory.ListRequest{Kind: "turns"})
	if res.Turns[0].User != "question 4 about tea" || res.Turns[0].Processed {
		t.Errorf("first listed turn = %+v, want the newest, not processed", res.Turns[0])
	}
	th, _ := s.List(ctx, memory.ListRequest{Kind: "threads"})
	if th.Threads[0].Turns+th.Threads[1].Turns != 5 || th.Threads[0].Pending != th.Threads[0].Turns {
		t.Errorf("threads = %+v", th.Threads)
	}

	bad := []struct {
		req  memory.ListRequest
		want string
	}{
		{memory.ListRequest{Kind: "pages"}, "kind"},
		{memory.ListRequest{Kind: "turns", Category: "goal"}, "facts only"},
		{memory.ListRequest{Category: "hobby"}, "category"},
		{memory.ListRequest{MinConfidence: 2}, "min_confidence"},
		{memory.ListRequest{Since: "yesterday"}, "RFC 3339"},
		{memory.ListRequest{Since: "2025-02-01", Until: "2025-01-01"}, "swap"},
		{memory.ListRequest{Limit: 101}, "1 to 100"},
		{memory.ListRequest{Offset: -1}, "offset"},
		{memory.ListRequest{ThreadID: ".."}, "thread_id"},
	}
	for _, tt := range bad {
		if _, err := s.List(ctx, tt.req); !errors.Is(err, memory.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("List(%+v) error = %v, want ErrInvalidInput saying %q", tt.req, err, tt.want)
		}
	}
}

// TestApplyUpdateRecordsHistory checks the events the updater leaves.
func TestApplyUpdateRecordsHistory(t *testing.T) {
	doc := memory.NewDocument()
	doc.Facts = []memory.Fact{
		{ID: "fact_00000001", Content: "Lives in Paris", Category: "context", Confidence: 0.9},
		{ID: "fact_00000002", Content: "Sent the uploaded file notes.pdf. Likes jazz", Category: "preference", Confidence: 0.9},
	}
	ids := []string{"fact_0000000a"}
	update.ApplyUpdate(doc, &update.Update{
		FactsToRemove: []string{"fact_00000001"},
		NewFacts:      []update.NewFact{{Content: "Lives in Lyon", Category: "context", Confidence: 0.9}},
	}, update.ApplyOptions{Source: "t1", Now: manageNow, MaxRemoveShare: 1, NewID: func() string { id := ids[0]; return id }})
	var got []string
	for _, e := range doc.FactEvents {
		got = append(got, e.FactID+" "+e.Event+" "+e.Source+": "+e.Reason)
	}
	want := []string{
		"fact_00000001 replaced t1: the model removed it while reading thread t1 (contradicted or outdated); kept as past",
		"fact_00000002 updated t1: upload scrub: sentences about uploaded files removed",
		"fact_0000000a created t1: extracted from thread t1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for range memory.MaxFactEvents + 5 {
		doc.AddFactEvent(memory.FactEvent{FactID: "x"})
	}
	if len(doc.FactEvents) != memory.MaxFactEvents || doc.FactEvents[0].FactID != "x" {
		t.Errorf("%d events kept, want the newest %d", len(doc.FactEvents), memory.MaxFactEvents)
	}
}
