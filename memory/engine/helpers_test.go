package engine

import (
	"log/slog"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

func mustCounter(tb testing.TB) memory.TokenCounter {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	return c
}

func newTestService(tb testing.TB, store memory.Store, opts ...Option) *Service {
	tb.Helper()
	cfg := memory.DefaultConfig()
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	s, err := NewService(cfg, store, mustCounter(tb), opts...)
	if err != nil {
		tb.Fatalf("NewService() = %v", err)
	}
	return s
}
