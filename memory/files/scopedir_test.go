package files_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// TestSwappedScopeDir: a Store keeps a scope's directory open between
// calls; when the directory at the scope's path is swapped for another
// after that, the kept one (moved out of the data directory) receives no
// write, and the next add goes to the directory now at the path.
func TestSwappedScopeDir(t *testing.T) {
	for _, scope := range []memory.Scope{{UserID: "bob"}, {UserID: "bob", AgentName: "a"}} {
		t.Run(scope.Key(), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			out := t.TempDir()
			s := mustOpen(t, data)
			storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 1))
			storetest.MustLoadDocument(t, s, scope)
			storetest.MustReadTurns(t, s, scope, 0)

			rel := filepath.Join("users", "bob")
			if scope.AgentName != "" {
				rel = filepath.Join(rel, "agents", "a")
			}
			moved := filepath.Join(out, "moved")
			if err := os.Rename(filepath.Join(data, rel), moved); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(data, rel), 0o700); err != nil {
				t.Fatal(err)
			}
			before := testutil.SnapshotTree(t, out)

			storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 2))
			storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
				d.Facts = append(d.Facts, memory.Fact{ID: "f1", Content: "new"})
				return nil
			})
			if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, out)); len(d) > 0 {
				t.Errorf("the swapped-out directory changed: %v", d)
			}
			turns := storetest.MustReadTurns(t, s, scope, 0)
			if len(turns) != 1 || turns[0].Seq != 1 || turns[0].User != storetest.NewTurn("t", 2).User {
				t.Errorf("ReadTurns after the swap = %+v, want the one turn added since, as seq 1", turns)
			}
			if doc := storetest.MustLoadDocument(t, s, scope); len(doc.Facts) != 1 {
				t.Errorf("LoadDocument after the swap has %d facts, want 1", len(doc.Facts))
			}
		})
	}
}
