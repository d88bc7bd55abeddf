package postgres

import "testing"

// SynchronousCommit returns the synchronous_commit setting of one of the
// Store's connections.
func SynchronousCommit(tb testing.TB, s *Store) string {
	tb.Helper()
	var v string
	if err := s.pool.QueryRow(tb.Context(), "SHOW synchronous_commit").Scan(&v); err != nil {
		tb.Fatalf("SHOW synchronous_commit: %v", err)
	}
	return v
}
