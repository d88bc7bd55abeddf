package engine_test

import (
	"context"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Every change records who made it: the actor of the call's context lands
// on the events that call adds, and only on them.
func TestActorRecorded(t *testing.T) {
	svc := newManageService(t, t.TempDir())
	ctx := t.Context()
	steps := []struct {
		actor memory.Actor
		do    func(ctx context.Context, id string) string
	}{
		{memory.ActorAssistant, func(ctx context.Context, _ string) string {
			res, err := svc.SaveFact(ctx, memory.SaveFactRequest{UserID: "ana", Content: "Sails a sloop"})
			if err != nil {
				t.Fatal(err)
			}
			return res.Fact.ID
		}},
		{memory.ActorViewer, func(ctx context.Context, id string) string {
			text := "Sails a 34-foot sloop"
			if _, err := svc.UpdateFact(ctx, memory.UpdateFactRequest{UserID: "ana", ID: id, Content: &text}); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		{"", func(ctx context.Context, id string) string {
			conf := 0.5
			if _, err := svc.UpdateFact(ctx, memory.UpdateFactRequest{UserID: "ana", ID: id, Confidence: &conf}); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		{memory.ActorCLI, func(ctx context.Context, id string) string {
			if _, err := svc.Forget(ctx, memory.ForgetRequest{UserID: "ana", FactIDs: []string{id}, Source: memory.SourceCLI}); err != nil {
				t.Fatal(err)
			}
			return id
		}},
	}
	id := ""
	for _, st := range steps {
		c := ctx
		if st.actor != "" {
			c = memory.WithActor(ctx, st.actor)
		}
		id = st.do(c, id)
	}
	hist, err := svc.FactHistory(ctx, memory.HistoryRequest{UserID: "ana", FactID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Events) != len(steps) {
		t.Fatalf("FactHistory() = %d events, want %d: %+v", len(hist.Events), len(steps), hist.Events)
	}
	for i, st := range steps {
		if got := hist.Events[i].Actor; got != st.actor {
			t.Errorf("event %d (%s) actor = %q, want %q", i, hist.Events[i].Event, got, st.actor)
		}
	}
	if got := memory.ActorFrom(ctx); got != "" {
		t.Errorf("ActorFrom(plain context) = %q, want empty", got)
	}
}
