package importers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// fuzzOptions are import options with deterministic ids.
func fuzzOptions() *Options {
	n := 0
	return &Options{
		DefaultUser: "fuzz",
		Now:         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		NewTurnID:   func() string { n++; return fmt.Sprintf("turn_%d", n) },
		NewFactID:   func() string { n++; return fmt.Sprintf("fact_%08x", n) },
	}
}

// checkImport applies the engine's rules to parsed scopes, as Import
// does before writing them.
func checkImport(cfg memory.Config, p *Parsed) {
	for _, s := range p.Scopes {
		engine.CheckImport(cfg, s.Scope, s.Doc, s.Turns)
	}
}

// checkImported checks the invariants every successful conversion keeps.
func checkImported(t *testing.T, scopes []memory.ImportedScope) {
	t.Helper()
	for _, s := range scopes {
		ids := map[string]bool{}
		for _, list := range [][]memory.Fact{s.Doc.Facts, s.Doc.Knowledge, s.Doc.AssistantKnowledge} {
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
		for i := 1; i < len(s.Turns); i++ {
			if s.Turns[i].Seq <= s.Turns[i-1].Seq {
				t.Fatalf("turn seqs out of order: %d after %d", s.Turns[i].Seq, s.Turns[i-1].Seq)
			}
		}
	}
}

func FuzzParseDeerFlow(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "deerflow", "memory.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"facts":[{"id":"x","content":" a ","category":"goal","confidence":7,"sourceError":"e"}]}`))
	f.Add([]byte(`{"user":{"nope":{"summary":"s"}},"history":{},"lastUpdated":"2026-13-40 99:00:00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseDeerFlow(data, fuzzOptions())
		if err != nil {
			return
		}
		checkImported(t, p.Scopes)
		checkImport(memory.DefaultConfig(), p) // must not panic
	})
}

func FuzzParseMnemoExport(f *testing.F) {
	f.Add([]byte(`{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"a"},"document":{"version":"1.0","facts":[]},"turns":[{"id":"t","seq":1,"thread_id":"x"}]}]}`))
	f.Add([]byte(`{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"a"},"document":null,"turns":null}]}`))
	f.Add([]byte(`{"format":"mnemo-export","version":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseMnemoExport(data, fuzzOptions())
		if err != nil {
			return
		}
		for _, s := range p.Scopes {
			if s.Doc == nil || s.Doc.Facts == nil {
				t.Fatalf("scope %s has no document after parsing", s.Scope.Key())
			}
			if s.Scope.Validate() != nil {
				t.Fatalf("invalid scope %q accepted", s.Scope.Key())
			}
		}
		checkImport(memory.DefaultConfig(), p)
	})
}

func FuzzMemoryOSTurns(f *testing.F) {
	f.Add("hi", "hello", "2025-07-02 09:15:00", []byte(`{"a":1}`))
	f.Add("", "", "", []byte(`null`))
	f.Add("x", "y", "2025-07-02T09:15:00Z", []byte(`[1]`))
	f.Fuzz(func(t *testing.T, user, reply, ts string, meta []byte) {
		pages := []memoryOSPage{{UserInput: user, AgentResponse: reply, Timestamp: ts, MetaData: meta}, {UserInput: reply, AgentResponse: user, Timestamp: ts}}
		turns, err := memoryOSTurns(pages, memoryOSThread, fuzzOptions(), &Parsed{})
		if err != nil {
			return
		}
		checkImported(t, []memory.ImportedScope{{Doc: memory.NewDocument(), Turns: turns}})
		for _, tr := range turns {
			if tr.Time.IsZero() || tr.ThreadID != memoryOSThread {
				t.Fatalf("turn %+v has no time or the wrong thread", tr)
			}
		}
	})
}
