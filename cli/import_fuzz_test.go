package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/cli/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// fuzzOptions are import options with deterministic ids.
func fuzzOptions() *importOptions {
	n := 0
	return &importOptions{
		defaultUser: "fuzz",
		now:         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		newTurnID:   func() string { n++; return fmt.Sprintf("turn_%d", n) },
		newFactID:   func() string { n++; return fmt.Sprintf("fact_%08x", n) },
	}
}

// checkImported checks the invariants every successful conversion keeps.
func checkImported(t *testing.T, scopes []importedScope) {
	t.Helper()
	for _, s := range scopes {
		ids := map[string]bool{}
		for _, list := range [][]memory.Fact{s.doc.Facts, s.doc.Knowledge, s.doc.AssistantKnowledge} {
			for _, f := range list {
				if !memory.ValidCategory(f.Category) || f.Confidence < 0 || f.Confidence > 1 || f.Content == "" {
					t.Fatalf("imported fact %+v breaks the document's rules", f)
				}
				if f.SourceError != "" && f.Category != memory.CategoryCorrection {
					t.Fatalf("sourceError kept on a %s fact", f.Category)
				}
				if ids[f.ID] {
					t.Fatalf("fact id %s imported twice", f.ID)
				}
				ids[f.ID] = true
			}
		}
		for i := 1; i < len(s.turns); i++ {
			if s.turns[i].Seq <= s.turns[i-1].Seq {
				t.Fatalf("turn seqs out of order: %d after %d", s.turns[i].Seq, s.turns[i-1].Seq)
			}
		}
	}
}

func FuzzParseDeerFlow(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "import", "deerflow", "memory.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"facts":[{"id":"x","content":" a ","category":"goal","confidence":7,"sourceError":"e"}]}`))
	f.Add([]byte(`{"user":{"nope":{"summary":"s"}},"history":{},"lastUpdated":"2026-13-40 99:00:00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		scopes, err := parseDeerFlow(data, fuzzOptions())
		if err != nil {
			return
		}
		checkImported(t, scopes)
		checkImport(memory.DefaultConfig(), scopes) // must not panic
	})
}

func FuzzParseMnemoExport(f *testing.F) {
	f.Add([]byte(`{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"a"},"document":{"version":"1.0","facts":[]},"turns":[{"id":"t","seq":1,"thread_id":"x"}]}]}`))
	f.Add([]byte(`{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"a"},"document":null,"turns":null}]}`))
	f.Add([]byte(`{"format":"mnemo-export","version":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		scopes, err := parseMnemoExport(data, fuzzOptions())
		if err != nil {
			return
		}
		for _, s := range scopes {
			if s.doc == nil || s.doc.Facts == nil {
				t.Fatalf("scope %s has no document after parsing", s.scope.Key())
			}
			if s.scope.Validate() != nil {
				t.Fatalf("invalid scope %q accepted", s.scope.Key())
			}
		}
		checkImport(memory.DefaultConfig(), scopes)
	})
}

func FuzzMemoryOSTurns(f *testing.F) {
	f.Add("hi", "hello", "2025-07-02 09:15:00", []byte(`{"a":1}`))
	f.Add("", "", "", []byte(`null`))
	f.Add("x", "y", "2025-07-02T09:15:00Z", []byte(`[1]`))
	f.Fuzz(func(t *testing.T, user, reply, ts string, meta []byte) {
		pages := []memoryOSPage{{UserInput: user, AgentResponse: reply, Timestamp: ts, MetaData: meta}, {UserInput: reply, AgentResponse: user, Timestamp: ts}}
		turns, err := memoryOSTurns(pages, memoryOSThread, fuzzOptions())
		if err != nil {
			return
		}
		checkImported(t, []importedScope{{doc: memory.NewDocument(), turns: turns}})
		for _, tr := range turns {
			if tr.Time.IsZero() || tr.ThreadID != memoryOSThread {
				t.Fatalf("turn %+v has no time or the wrong thread", tr)
			}
		}
	})
}

// FuzzImportHistory converts any export the parsers accept into turns and
// facts: every turn it plans has a valid thread and key, and text within
// the limits.
func FuzzImportHistory(f *testing.F) {
	for _, p := range []string{"chatgpt/conversations.json", "claude/conversations.json", "memory-graph/memory.jsonl"} {
		seed, err := os.ReadFile(filepath.Join("testdata", "import", p))
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
			plan := planChat(cfg, scope, "fuzz", convs, map[string]bool{}, now, newID, nil)
			keys := map[string]bool{}
			for _, tr := range plan.turns {
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
			p, err := planGraph(cfg, scope, g, "", nil, now)
			if err != nil {
				return
			}
			doc := memory.NewDocument()
			if _, err := p.apply(doc, cfg.MaxFacts, now, update.NewFactID); err != nil {
				t.Fatalf("apply a checked plan: %v", err)
			}
			if _, err := engine.CheckImport(cfg, scope, doc, nil); err != nil {
				t.Fatalf("the facts of a graph break the rules: %v", err)
			}
		}
	})
}
