package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// monthsClock is a clock the test moves by hand.
type monthsClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *monthsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *monthsClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const day = 24 * time.Hour

// monthsService is a service over a memStore whose model answers each
// update with the reply queued for the thread the conversation names
// ("[thread]" in the user input).
type monthsService struct {
	*Service
	store   *memStore
	clock   *monthsClock
	mu      sync.Mutex
	replies map[string]string
}

func newMonthsService(t *testing.T, mod func(*memory.Config)) *monthsService {
	t.Helper()
	m := &monthsService{store: newMemStore(), clock: &monthsClock{now: time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)}, replies: map[string]string{}}
	llm := &fakeLLM{reply: func(prompt string) (string, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for marker, r := range m.replies {
			if strings.Contains(prompt, "["+marker+"]") {
				return r, nil
			}
		}
		return `{"user":{},"history":{},"newFacts":[],"factsToRemove":[]}`, nil
	}}
	n := 0
	s := newTestService(t, m.store, configWith(mod), WithLLM(llm), WithClock(m.clock.Now),
		WithFactIDs(func() string { n++; return fmt.Sprintf("fact_%08x", n) }))
	t.Cleanup(func() { s.Close(context.Background()) })
	m.Service = s
	return m
}

// say stores one exchange of thread (at the clock's time) whose update
// the model answers with facts added and ids removed, and flushes it.
func (m *monthsService) say(t *testing.T, thread string, remove []string, facts ...update.NewFact) *memory.FlushResult {
	t.Helper()
	reply, _ := json.Marshal(map[string]any{"user": map[string]any{}, "history": map[string]any{}, "newFacts": facts, "factsToRemove": append([]string{}, remove...)})
	m.mu.Lock()
	m.replies[thread] = string(reply)
	m.mu.Unlock()
	if _, err := m.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: "[" + thread + "] news", AgentResponse: "noted",
		Timestamp: m.clock.Now().Format(time.RFC3339)}); err != nil {
		t.Fatalf("Add() = %v", err)
	}
	res, err := m.Flush(t.Context(), memory.FlushRequest{ThreadID: thread})
	if err != nil {
		t.Fatalf("Flush() = %v", err)
	}
	return res
}

func (m *monthsService) doc(t *testing.T) *memory.Document {
	t.Helper()
	d, err := m.store.LoadDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func findFact(list []memory.Fact, content string) (memory.Fact, bool) {
	for _, f := range list {
		if strings.EqualFold(f.Content, content) {
			return f, true
		}
	}
	return memory.Fact{}, false
}

func eventsOf(d *memory.Document, kind string) []memory.FactEvent {
	var out []memory.FactEvent
	for _, e := range d.FactEvents {
		if e.Event == kind {
			out = append(out, e)
		}
	}
	return out
}

func fact(content, cat string, conf float64) update.NewFact {
	return update.NewFact{Content: content, Category: cat, Confidence: conf}
}

// TestMonthsDuplicatesMergedSourcesKept: a fact stated again a month later
// in other words is one fact, confirmed, with both threads as sources and
// its first creation; a duplicate already in the document (imported) is
// merged by the next pass into the fact with the higher confidence.
func TestMonthsDuplicatesMergedSourcesKept(t *testing.T) {
	m := newMonthsService(t, nil)
	jan := m.clock.Now()
	m.say(t, "jan", nil, fact("Uses Go for backend work", memory.CategoryKnowledge, 0.8))
	m.clock.advance(31 * day)
	res := m.say(t, "feb", nil, fact("uses Go for the backend", memory.CategoryPreference, 0.85))
	if len(res.FactsAdded) != 0 || len(res.FactsConfirmed) != 1 {
		t.Fatalf("second statement: added %v, confirmed %v; want nothing added, one confirmed", res.FactsAdded, res.FactsConfirmed)
	}
	d := m.doc(t)
	if len(d.Facts) != 1 {
		t.Fatalf("facts = %+v, want one", d.Facts)
	}
	f := d.Facts[0]
	if !f.CreatedAt.Equal(jan) || f.Confidence != 0.9 || !slices.Equal(f.AllSources(), []string{"jan", "feb"}) || !f.LastConfirmed.Equal(m.clock.Now()) {
		t.Errorf("merged fact = %+v, want created %v, confidence 0.9 (0.85 + one confirmation), sources jan and feb, confirmed now", f, jan)
	}
	if ev := eventsOf(d, memory.FactConfirmed); len(ev) != 1 || ev[0].FactID != f.ID || ev[0].Source != "feb" {
		t.Errorf("confirmed events = %+v", ev)
	}

	// A near-duplicate that got in another way (an import): the pass merges it.
	if _, err := m.store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_000000aa", Content: "Uses Go for the backend work.", Category: memory.CategoryKnowledge, Confidence: 0.95,
			CreatedAt: jan.Add(-day), Source: "import"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Maintain(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	d = m.doc(t)
	if len(d.Facts) != 1 || d.Facts[0].ID != "fact_000000aa" || rep.Merged[f.ID] != "fact_000000aa" {
		t.Fatalf("after the pass facts = %+v, merged %v; want the higher-confidence fact to absorb %s", d.Facts, rep.Merged, f.ID)
	}
	g := d.Facts[0]
	if g.Confidence != 0.95 || !g.CreatedAt.Equal(jan.Add(-day)) || !slices.Equal(g.AllSources(), []string{"import", "jan", "feb"}) {
		t.Errorf("survivor = %+v, want confidence 0.95, the earliest creation and every source", g)
	}
	if ev := eventsOf(d, memory.FactMerged); len(ev) != 1 || ev[0].FactID != f.ID || ev[0].Into != g.ID || ev[0].Content == "" {
		t.Errorf("merged events = %+v", ev)
	}
	if _, ok := findFact(d.RetiredFacts, f.Content); !ok {
		t.Errorf("merged fact not kept in retired facts: %+v", d.RetiredFacts)
	}
	// Forgetting the survivor forgets what was merged into it.
	if _, err := m.Forget(t.Context(), memory.ForgetRequest{FactIDs: []string{g.ID}}); err != nil {
		t.Fatal(err)
	}
	d = m.doc(t)
	if len(d.Facts)+len(d.RetiredFacts) != 0 {
		t.Errorf("after forget: facts %+v, retired %+v; want none", d.Facts, d.RetiredFacts)
	}
	for _, e := range d.FactEvents {
		if strings.Contains(strings.ToLower(e.Content), "go") {
			t.Errorf("event %+v keeps forgotten content", e)
		}
	}
}

// TestMonthsCorrectionNeverMergedAway: a correction and a fact with the
// same words stay two facts, on arrival and in the pass.
func TestMonthsCorrectionNeverMergedAway(t *testing.T) {
	m := newMonthsService(t, nil)
	m.say(t, "t1", nil, fact("Uses spaces for indentation in Python code", memory.CategoryPreference, 0.9))
	m.clock.advance(10 * day)
	m.say(t, "t2", nil, fact("Use spaces for indentation in Python code", memory.CategoryCorrection, 0.95))
	if _, err := m.Maintain(t.Context(), "", ""); err != nil {
		t.Fatal(err)
	}
	d := m.doc(t)
	cats := map[string]bool{}
	for _, f := range d.Facts {
		cats[f.Category] = true
	}
	if len(d.Facts) != 2 || !cats[memory.CategoryCorrection] || !cats[memory.CategoryPreference] {
		t.Errorf("facts = %+v, want the correction and the preference apart", d.Facts)
	}
	// Two corrections that say the same are one.
	m.say(t, "t3", nil, fact("Use spaces for the indentation in Python code", memory.CategoryCorrection, 0.9))
	if d := m.doc(t); len(d.Facts) != 2 {
		t.Errorf("facts = %+v, want the second correction merged into the first", d.Facts)
	}
}

// TestMonthsStaleRetiredAndRestorable: a fact nobody confirms decays after
// fact_stale_after and is retired, restorable; a correction retrieved
// every month keeps its confidence.
func TestMonthsStaleRetiredAndRestorable(t *testing.T) {
	m := newMonthsService(t, nil)
	m.say(t, "t1", nil,
		fact("Plays badminton on Tuesday evenings", memory.CategoryBehavior, 0.9),
		fact("Never suggest Java libraries for this project", memory.CategoryCorrection, 0.9),
		fact("Never schedule meetings before ten in the morning", memory.CategoryCorrection, 0.9))
	for month := range 13 {
		m.clock.advance(30 * day)
		if _, err := m.Retrieve(t.Context(), memory.RetrieveRequest{Query: "which Java libraries should I use for this project?"}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Maintain(t.Context(), "", ""); err != nil {
			t.Fatal(err)
		}
		d := m.doc(t)
		badminton, ok := findFact(d.Facts, "Plays badminton on Tuesday evenings")
		switch {
		case month < 5 && (!ok || badminton.Confidence != 0.9):
			t.Fatalf("month %d: fact = %+v, want it untouched before fact_stale_after", month+1, badminton)
		case month == 7 && (!ok || badminton.Confidence >= 0.9 || badminton.Confidence < update.FactRetireBelow):
			t.Fatalf("month %d: fact = %+v, want it decaying", month+1, badminton)
		}
	}
	d := m.doc(t)
	if _, ok := findFact(d.Facts, "Plays badminton on Tuesday evenings"); ok {
		t.Fatalf("after 13 months the unconfirmed fact is still there: %+v", d.Facts)
	}
	retired, ok := findFact(d.RetiredFacts, "Plays badminton on Tuesday evenings")
	if !ok || len(eventsOf(d, memory.FactRetired)) == 0 || len(eventsOf(d, memory.FactDecayed)) == 0 {
		t.Fatalf("retired = %+v, events %+v; want it retired with decay and retire events", d.RetiredFacts, d.FactEvents)
	}
	if c, ok := findFact(d.Facts, "Never suggest Java libraries for this project"); !ok || c.Confidence != 0.9 {
		t.Errorf("relevant correction = %+v, want it kept at 0.9", c)
	}
	if _, ok := findFact(d.Facts, "Never schedule meetings before ten in the morning"); ok {
		t.Errorf("a correction never retrieved should decay and retire like any fact")
	}
	res, err := m.RestoreFact(t.Context(), memory.RestoreFactRequest{ID: retired.ID})
	if err != nil {
		t.Fatal(err)
	}
	d = m.doc(t)
	if got, ok := findFact(d.Facts, retired.Content); !ok || got.Confidence < memory.DefaultConfig().FactConfidenceThreshold || res.Fact.ID != retired.ID {
		t.Errorf("restored = %+v, want it back at the threshold or above", got)
	}
	if len(eventsOf(d, memory.FactRestored)) != 1 {
		t.Errorf("restore event missing")
	}
	if _, err := m.RestoreFact(t.Context(), memory.RestoreFactRequest{ID: retired.ID}); err == nil {
		t.Errorf("restoring twice succeeded")
	}
}

// TestMonthsReplacedFactsAnswerableAsPast: a replaced fact is kept with its
// interval and shown only to questions about the past.
func TestMonthsReplacedFactsAnswerableAsPast(t *testing.T) {
	m := newMonthsService(t, nil)
	jan := m.clock.Now()
	m.say(t, "jan", nil, fact("Works at Acme Corp as a backend engineer", memory.CategoryContext, 0.9))
	acme := m.doc(t).Facts[0]
	m.clock.advance(150 * day)
	m.say(t, "jun", []string{acme.ID}, fact("Works at Globex as an engineering manager", memory.CategoryContext, 0.9))
	d := m.doc(t)
	past, ok := findFact(d.PastFacts, acme.Content)
	if !ok || !past.Since().Equal(jan) || !past.ValidTo.Equal(m.clock.Now()) {
		t.Fatalf("past facts = %+v, want Acme from %v to %v", d.PastFacts, jan, m.clock.Now())
	}
	if ev := eventsOf(d, memory.FactReplaced); len(ev) != 1 || !ev[0].ValidTo.Equal(past.ValidTo) || ev[0].Content != acme.Content {
		t.Errorf("replaced events = %+v", ev)
	}
	res, err := m.Retrieve(t.Context(), memory.RetrieveRequest{Query: "Where did I work before Globex?"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[past, true 2025-01-06 to 2025-06-05] Works at Acme Corp"
	if len(res.PastFacts) != 1 || !strings.Contains(res.Injection, want) {
		t.Errorf("past question: past facts %+v, injection %q; want %q", res.PastFacts, res.Injection, want)
	}
	now, err := m.Retrieve(t.Context(), memory.RetrieveRequest{Query: "Where do I work?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(now.PastFacts) != 0 || strings.Contains(now.Injection, "Acme") {
		t.Errorf("present question shows the past: %q", now.Injection)
	}
	if _, err := m.Forget(t.Context(), memory.ForgetRequest{FactIDs: []string{acme.ID}}); err != nil {
		t.Fatalf("forget a past fact: %v", err)
	}
	if d := m.doc(t); len(d.PastFacts) != 0 {
		t.Errorf("forgotten past fact kept: %+v", d.PastFacts)
	}
}

// TestMonthsBudgetDefersAndResumes: once a scope's daily token budget is
// spent, extraction waits (turns pending, flush and profile say why) and
// resumes the next day with nothing lost.
func TestMonthsBudgetDefersAndResumes(t *testing.T) {
	m := newMonthsService(t, func(c *memory.Config) { c.DailyTokenBudget = 50 })
	first := m.say(t, "t1", nil, fact("Keeps bees in the garden", memory.CategoryContext, 0.9))
	if len(first.FactsAdded) != 1 {
		t.Fatalf("first update: %+v", first)
	}
	second := m.say(t, "t2", nil, fact("Collects vintage fountain pens", memory.CategoryContext, 0.9))
	if len(second.FactsAdded) != 0 || second.Pending.Turns != 1 || !strings.Contains(second.Reason, "daily token budget") || second.Pending.Deferred == "" {
		t.Fatalf("over budget: %+v; want the turn pending and the budget named", second)
	}
	prof, err := m.Profile(t.Context(), memory.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if prof.Usage.Deferred == "" || prof.Usage.Today.LLMCalls != 1 || prof.Usage.Today.Deferred == 0 || prof.Usage.Today.Tokens() < 50 {
		t.Errorf("profile usage = %+v, want one call, the deferral and its message", prof.Usage)
	}
	m.clock.advance(day)
	res, err := m.Flush(t.Context(), memory.FlushRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FactsAdded) != 1 || res.Pending.Turns != 0 || res.Pending.Deferred != "" {
		t.Fatalf("next day: %+v; want the deferred turn processed", res)
	}
	d := m.doc(t)
	if _, ok := findFact(d.Facts, "Collects vintage fountain pens"); !ok {
		t.Errorf("deferred fact lost: %+v", d.Facts)
	}
	if len(d.Usage) != 2 || d.Usage[0].LLMCalls != 1 || d.Usage[1].LLMCalls != 1 {
		t.Errorf("saved usage = %+v, want one call on each of two days", d.Usage)
	}
}

// TestOldDocumentLoads: a memory.json of an earlier build (no sources,
// validity, usage or archives) loads, and writes back without the new
// fields.
func TestOldDocumentLoads(t *testing.T) {
	old := `{"version":"1.0","user":{"workContext":{"summary":""},"personalContext":{"summary":""},"topOfMind":{"summary":""}},` +
		`"history":{"recentMonths":{"summary":""},"earlierContext":{"summary":""},"longTermBackground":{"summary":""}},` +
		`"facts":[{"id":"fact_1","content":"Uses Go","category":"knowledge","confidence":0.9,"createdAt":"2025-01-01T00:00:00Z","source":"t1"}],"revision":3}`
	var d memory.Document
	if err := json.Unmarshal([]byte(old), &d); err != nil {
		t.Fatal(err)
	}
	f := d.Facts[0]
	if f.Sources != nil || !f.Since().Equal(f.CreatedAt) || !f.Confirmed().Equal(f.CreatedAt) || d.Usage != nil {
		t.Errorf("old fact = %+v", f)
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"sources", "validFrom", "usage", "pastFacts", "retiredFacts", "maintainedAt"} {
		if strings.Contains(string(out), k) {
			t.Errorf("re-encoded old document has %q: %s", k, out)
		}
	}
}

// TestPastCue tells questions about the past from others.
func TestPastCue(t *testing.T) {
	for q, want := range map[string]bool{
		"Where did I work before Globex?": true, "What did I use to play?": true, "Which editor did I previously use?": true,
		"Where do I work?": false, "What should I cook tonight?": false, "Is the build green?": false,
	} {
		if got := recall.PastCue(q); got != want {
			t.Errorf("pastCue(%q) = %v, want %v", q, got, want)
		}
	}
}
