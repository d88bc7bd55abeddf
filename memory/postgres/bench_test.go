package postgres_test

import (
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// BenchmarkStore runs storetest.Bench against the local PostgreSQL (a
// Unix socket, fsync on), to compare with memory/files' BenchmarkStore.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) memory.Store { return mustOpen(b, pgtest.NewDatabase(b)) })
}
