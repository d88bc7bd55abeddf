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

// newTestService is the one constructor of the engine's tests (the
// external tests reach it as NewTestService, export_test.go): a Service
// over store with cfg, a cl100k_base counter and logs discarded, then
// opts. Fixtures (newTierService, newMonthsService, …) build on it.
func newTestService(tb testing.TB, store memory.Store, cfg memory.Config, opts ...Option) *Service {
	tb.Helper()
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	s, err := NewService(cfg, store, mustCounter(tb), opts...)
	if err != nil {
		tb.Fatalf("NewService() = %v", err)
	}
	return s
}

// configWith is the default configuration changed by mod, when not nil.
func configWith(mod func(*memory.Config)) memory.Config {
	cfg := memory.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}
