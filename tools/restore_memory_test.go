package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// TestRestoreMemoryTool: a retired and a merged fact come back through
// the protocol, with the restore in memory_history; a current fact, an
// unknown id and a fact a current one already says are errors the model
// can act on.
func TestRestoreMemoryTool(t *testing.T) {
	dir := t.TempDir()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	old := testNow.AddDate(-1, 0, 0)
	if _, err := store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
		d.Facts = []memory.Fact{{ID: "fact_0000000a", Content: "Writes backend services in Go", Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: old, Source: "t1"}}
		d.RetiredFacts = []memory.Fact{
			{ID: "fact_0000000b", Content: "Keeps bees in the garden", Category: memory.CategoryContext, Confidence: 0.25, CreatedAt: old, Source: "t2"},
			{ID: "fact_0000000c", Content: "Writes backend services in Go every day", Category: memory.CategoryContext, Confidence: 0.8, CreatedAt: old, Source: "t3"},
		}
		d.AddFactEvent(memory.FactEvent{FactID: "fact_0000000b", Event: memory.FactRetired, At: old, Source: memory.SourceMaintenance})
		d.AddFactEvent(memory.FactEvent{FactID: "fact_0000000c", Event: memory.FactMerged, At: old, Source: memory.SourceConsolidation, Into: "fact_0000000a"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, mustCounter(t), engine.WithClock(func() time.Time { return testNow }))
	if err != nil {
		t.Fatal(err)
	}
	e := connect(t, NewServer(svc, "test", WithServerOptions(server.WithOutputSchemaValidation())), dir)

	var res memory.RestoreFactResult
	text := e.mustOK(t, "restore_memory", `{"id": "fact_0000000b"}`, &res)
	if res.Fact.ID != "fact_0000000b" || res.Fact.Content != "Keeps bees in the garden" || res.Fact.Confidence < 0.7 || !res.Fact.LastConfirmed.Equal(testNow) {
		t.Errorf("restore_memory = %+v, want the fact back, confirmed now, at the confidence threshold", res)
	}
	if !strings.Contains(text, "Restored fact_0000000b") {
		t.Errorf("text = %q", text)
	}
	var list memory.ListResult
	e.mustOK(t, "list_memories", `{}`, &list)
	found := false
	for _, f := range list.Facts {
		found = found || f.ID == "fact_0000000b"
	}
	if !found {
		t.Errorf("list_memories after the restore = %+v, want fact_0000000b", list.Facts)
	}
	var hist memory.HistoryResult
	e.mustOK(t, "memory_history", `{"fact_id": "fact_0000000b"}`, &hist)
	if n := len(hist.Events); n == 0 || hist.Events[n-1].Event != memory.FactRestored || hist.Events[n-1].Source != memory.SourceManual {
		t.Errorf("memory_history = %+v, want a manual restored event last", hist.Events)
	}
	e.mustErr(t, "restore_memory", `{"id": "fact_0000000b"}`, "no retired, merged or replaced fact", "memory_history")
	e.mustErr(t, "restore_memory", `{"id": "fact_0000000c"}`, "fact_0000000a already says this")
	e.mustErr(t, "restore_memory", `{"id": "fact_0000000b", "user_id": "bob"}`, "no retired", "bob")
	e.mustErr(t, "restore_memory", `{}`, "id")
}
