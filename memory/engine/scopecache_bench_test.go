package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// BenchmarkManyUsers stores 20 exchanges and runs one retrieval for each
// of many users through one Service on the file store with the default
// scope cache budget,
// and reports the states kept, their estimated size and the live heap.
func BenchmarkManyUsers(b *testing.B) {
	store, err := files.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	tokens, err := tiktoken.New("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	s, err := engine.NewService(memory.DefaultConfig(), store, tokens, engine.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	u := 0
	for b.Loop() {
		user := fmt.Sprintf("u%05d", u)
		for k := range 20 {
			if _, err := s.Add(b.Context(), memory.AddRequest{UserID: user, ThreadID: fmt.Sprintf("t%d", k%3),
				UserInput:     fmt.Sprintf("user %d exchange %d: I am planning a trip to city %d", u, k, (u*7+k)%97),
				AgentResponse: "Noted."}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Retrieve(b.Context(), memory.RetrieveRequest{UserID: user, Query: "trip"}); err != nil {
			b.Fatal(err)
		}
		u++
	}
	st := s.CacheStats()
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(st.Scopes), "states")
	b.ReportMetric(float64(st.Bytes)/(1<<20), "estMB")
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heapMB")
}
