package files

import (
	"fmt"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// TestCloseIdle checks that a store writing to many scopes keeps only
// maxOpen of them with open files, and that a scope whose files were
// closed carries on numbering where it left off.
func TestCloseIdle(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.maxOpen = 2
	scopes := make([]memory.Scope, 6)
	for i := range scopes {
		scopes[i] = memory.Scope{UserID: fmt.Sprintf("user%d", i)}
	}
	for round := range 3 {
		for _, sc := range scopes {
			got := storetest.MustAppendTurns(t, s, sc, storetest.NewTurn("t", round))
			storetest.CheckSeqs(t, got, int64(round+1), int64(round+1))
			storetest.MustUpdateDocument(t, s, sc, func(*memory.Document) error { return nil })
			s.mu.Lock()
			open := s.openScopes
			s.mu.Unlock()
			if open > s.maxOpen {
				t.Fatalf("%d scopes have open files, want at most %d", open, s.maxOpen)
			}
		}
	}
	for _, sc := range scopes {
		storetest.CheckSeqs(t, storetest.MustReadTurns(t, s, sc, 0), 1, 3)
		if d := storetest.MustLoadDocument(t, s, sc); d.Revision != 3 {
			t.Errorf("%s: revision %d, want 3", sc.Key(), d.Revision)
		}
	}
}
