package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Bench runs the same benchmarks against a Store implementation, so that
// stores can be compared figure for figure:
//
//	func BenchmarkStore(b *testing.B) { storetest.Bench(b, newStore) }
//
// newStore must return an empty store, closed when the benchmark ends.
func Bench(b *testing.B, newStore func(b *testing.B) memory.Store) {
	const logLen = 10_000
	prefilled := func(b *testing.B) (memory.Store, memory.Scope) {
		s := newStore(b)
		scope := memory.Scope{UserID: "bench", AgentName: "agent"}
		MustAppendTurns(b, s, scope, NewTurns("prefill", 0, logLen)...)
		return s, scope
	}
	b.Run("AppendTurn/log=10000", func(b *testing.B) {
		s, scope := prefilled(b)
		turn := []memory.Turn{NewTurn("bench", 0)}
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.AppendTurns(ctx, scope, turn); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadTurnsAll/log=10000", func(b *testing.B) {
		s, scope := prefilled(b)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			turns, err := s.ReadTurns(ctx, scope, 0)
			if err != nil || len(turns) != logLen {
				b.Fatalf("ReadTurns = %d turns, %v", len(turns), err)
			}
		}
	})
	b.Run("ReadTurnsNoop/log=10000", func(b *testing.B) {
		s, scope := prefilled(b)
		MustReadTurns(b, s, scope, 0)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			turns, err := s.ReadTurns(ctx, scope, logLen)
			if err != nil || len(turns) != 0 {
				b.Fatalf("ReadTurns = %d turns, %v", len(turns), err)
			}
		}
	})
	withFacts := func(b *testing.B) (memory.Store, memory.Scope) {
		s := newStore(b)
		scope := memory.Scope{UserID: "bench"}
		MustUpdateDocument(b, s, scope, func(d *memory.Document) error {
			for i := range 100 {
				d.Facts = append(d.Facts, memory.Fact{
					ID: fmt.Sprintf("fact_%08x", i), Content: fmt.Sprintf("fact number %d about the user", i),
					Category: memory.CategoryContext, Confidence: 0.8, CreatedAt: time.Now().UTC(), Source: "bench",
				})
			}
			d.Watermarks = map[string]int64{"default": 10, "t1": 20}
			return nil
		})
		return s, scope
	}
	b.Run("LoadDocument/facts=100", func(b *testing.B) {
		s, scope := withFacts(b)
		MustLoadDocument(b, s, scope)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.LoadDocument(ctx, scope); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UpdateDocument/facts=100", func(b *testing.B) {
		s, scope := withFacts(b)
		ctx := b.Context()
		n := int64(0)
		b.ReportAllocs()
		for b.Loop() {
			n++
			if _, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error {
				d.Watermarks["default"] = n
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
