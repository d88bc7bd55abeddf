package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/memory"
)

// FuzzImportHistory converts any export the parsers accept into turns and
// facts: every turn it plans has a valid thread and key, and text within
// the limits.
func FuzzImportHistory(f *testing.F) {
	for _, p := range []string{"chatgpt/conversations.json", "claude/conversations.json", "memory-graph/memory.jsonl"} {
		seed, err := os.ReadFile(filepath.Join("..", "..", "importers", "testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	cfg := memory.DefaultConfig()
	scope := memory.Scope{UserID: "fuzz"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		newID := func() string { n++; return fmt.Sprintf("turn_%d", n) }
		for _, parse := range []func([]byte) ([]importers.Conversation, error){importers.ParseChatGPT, importers.ParseClaude} {
			convs, err := parse(data)
			if err != nil {
				continue
			}
			plan := &memory.ImportResult{}
			planChats(cfg, scope, "fuzz", convs, map[string]bool{}, now, newID, nil, plan)
			keys := map[string]bool{}
			for _, tr := range plan.Turns {
				if memory.ValidateID("thread_id", tr.ThreadID) != nil || memory.ValidateID("idempotency_key", tr.IdempotencyKey) != nil {
					t.Fatalf("turn %+v has an invalid thread or key", tr)
				}
				if keys[tr.ThreadID+" "+tr.IdempotencyKey] || len(tr.User) > cfg.MaxMessageBytes || tr.User == "" && tr.Reply == "" {
					t.Fatalf("turn %+v repeats a key or breaks a limit", tr)
				}
				keys[tr.ThreadID+" "+tr.IdempotencyKey] = true
			}
		}
		if g, err := importers.ParseGraph(data); err == nil {
			p, err := importers.GraphFacts(g, "")
			if err != nil || len(p.Facts) == 0 {
				// A graph with no facts is refused as an empty import.
				return
			}
			store := newMemStore()
			svc := newTestService(t, store, cfg, WithClock(func() time.Time { return now }))
			if _, err := svc.Import(t.Context(), memory.ImportRequest{Scope: scope, Facts: p.Facts}); err != nil {
				if len(p.Facts) <= cfg.MaxFacts {
					t.Fatalf("import the facts of a graph: %v", err)
				}
				return
			}
			doc, err := store.LoadDocument(t.Context(), scope)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := CheckImport(cfg, scope, doc, nil); err != nil {
				t.Fatalf("the facts of a graph break the rules: %v", err)
			}
		}
	})
}
