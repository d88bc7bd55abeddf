package postgres_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// mustOpen opens a Store on url, closed when the test ends.
func mustOpen(tb testing.TB, url string, opts ...postgres.Option) *postgres.Store {
	tb.Helper()
	opts = append([]postgres.Option{postgres.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	s, err := postgres.Open(tb.Context(), url, opts...)
	if err != nil {
		tb.Fatalf("Open() error: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Store {
		return mustOpen(t, pgtest.NewDatabase(t))
	})
}
