package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// prefilled opens a store in a fresh directory whose scope already holds
// n turns, written in one call.
func prefilled(b *testing.B, n int) (*files.Store, memory.Scope) {
	b.Helper()
	s := mustOpen(b, b.TempDir())
	scope := memory.Scope{UserID: "bench", AgentName: "agent"}
	if n > 0 {
		storetest.MustAppendTurns(b, s, scope, storetest.NewTurns("prefill", 0, n)...)
	}
	return s, scope
}

// BenchmarkAppendTurn appends one turn per call, fsync included, to logs
// of growing length; the cost must not grow with the log.
func BenchmarkAppendTurn(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			s, scope := prefilled(b, n)
			turn := []memory.Turn{storetest.NewTurn("bench", 0)}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendTurns(ctx, scope, turn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadTurnsNoop polls a log in which nothing is new.
func BenchmarkReadTurnsNoop(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			s, scope := prefilled(b, n)
			storetest.CheckSeqs(b, storetest.MustReadTurns(b, s, scope, 0), 1, int64(n))
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				turns, err := s.ReadTurns(ctx, scope, int64(n))
				if err != nil || len(turns) != 0 {
					b.Fatalf("ReadTurns = %d turns, %v", len(turns), err)
				}
			}
		})
	}
}

// BenchmarkLoadDocumentCached loads an unchanged document of 100 facts.
func BenchmarkLoadDocumentCached(b *testing.B) {
	dir := b.TempDir()
	s := mustOpen(b, dir)
	scope := memory.Scope{UserID: "bench"}
	storetest.MustUpdateDocument(b, s, scope, func(d *memory.Document) error {
		for i := range 100 {
			d.Facts = append(d.Facts, memory.Fact{
				ID: fmt.Sprintf("fact_%08x", i), Content: fmt.Sprintf("fact number %d about the user", i),
				Category: memory.CategoryContext, Confidence: 0.8, CreatedAt: time.Now().UTC(), Source: "bench",
			})
		}
		d.Watermarks = map[string]int64{"default": 10, "t1": 20}
		return nil
	})
	// A document saved a while ago: a just-written one is compared byte for
	// byte until its timestamp is old enough to trust.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "users", "bench", "memory.json"), old, old); err != nil {
		b.Fatal(err)
	}
	storetest.MustLoadDocument(b, s, scope)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.LoadDocument(ctx, scope); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStore runs storetest.Bench, the figures to compare with the
// other stores'.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) memory.Store { return mustOpen(b, b.TempDir()) })
}
