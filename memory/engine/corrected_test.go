package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// A correction is current: the fact takes the edit's time, is never
// marked earlier against the exchange that said the old value, answers a
// question asked in the old words, and that exchange is marked superseded.
func TestCorrectionIsCurrent(t *testing.T) {
	store, err := files.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, 10, 5, 19, 0, 0, 0, time.UTC)
	svc := engine.NewTestService(t, store, memory.DefaultConfig(), engine.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	if _, err := svc.Add(ctx, memory.AddRequest{ThreadID: "dinner", UserInput: "I'm vegetarian, can you suggest a dinner with lentils?",
		AgentResponse: "A lentil dal with rice."}); err != nil {
		t.Fatal(err)
	}
	saved, err := svc.SaveFact(ctx, memory.SaveFactRequest{Content: "Alice is vegetarian.", Category: "preference"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.AddDate(0, 1, 27)
	text := "Alice is pescatarian: she eats fish since November 2026."
	res, err := svc.UpdateFact(ctx, memory.UpdateFactRequest{ID: saved.Fact.ID, Content: &text})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Fact; !f.CorrectedAt.Equal(now) || !f.Since().Equal(now) || f.Replaced != "Alice is vegetarian." || !f.CreatedAt.Equal(saved.Fact.CreatedAt) {
		t.Errorf("UpdateFact() fact = %+v, want corrected now, replacing the old wording, created as before", f)
	}
	h, err := svc.FactHistory(ctx, memory.HistoryRequest{FactID: saved.Fact.ID})
	if err != nil || len(h.Events) != 2 || !h.Events[0].At.Equal(saved.Fact.CreatedAt) || h.Events[0].Content != "Alice is vegetarian." {
		t.Errorf("FactHistory() = %+v, %v; want the original kept", h, err)
	}
	for _, q := range []string{"Am I vegetarian?", "What should I cook for dinner with lentils?"} {
		got, err := svc.Retrieve(ctx, memory.RetrieveRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		inj := got.Injection
		line := ""
		for l := range strings.Lines(inj) {
			if strings.Contains(l, "pescatarian") {
				line = l
			}
		}
		switch {
		case line == "":
			t.Errorf("Retrieve(%q) does not show the correction:\n%s", q, inj)
		case strings.Contains(line, "earlier") || !strings.Contains(line, now.Format(time.DateOnly)):
			t.Errorf("Retrieve(%q) shows the correction as %q, want it dated %s and not earlier", q, line, now.Format(time.DateOnly))
		}
		for l := range strings.Lines(inj) {
			if strings.Contains(l, "I'm vegetarian") && !strings.Contains(l, "superseded") {
				t.Errorf("Retrieve(%q) shows the stale exchange unmarked: %q\n%s", q, l, inj)
			}
		}
	}
}
