package files_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

func TestVersionsSetting(t *testing.T) {
	for _, n := range []int{0, 1, 2, 100} {
		dir := t.TempDir()
		s := mustOpen(t, dir, files.WithVersions(n))
		scope := memory.Scope{UserID: "u"}
		for range 6 {
			storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })
		}
		vs, err := s.ListVersions(t.Context(), scope)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(n, 5); len(vs) != want {
			t.Errorf("versions=%d: kept %d versions, want %d", n, len(vs), want)
		}
		entries, _ := os.ReadDir(filepath.Join(scopeDir(dir, scope), "versions"))
		if len(entries) != min(n, 5) {
			t.Errorf("versions=%d: versions/ holds %d files, want %d", n, len(entries), min(n, 5))
		}
	}
}

// TestVersionsZeroRemovesKept checks that turning versions off removes
// the copies kept so far at the next save (a user who asks for no copies
// gets none).
func TestVersionsZeroRemovesKept(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "u"}
	s := mustOpen(t, dir)
	for range 3 {
		storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })
	}
	s0 := mustOpen(t, dir, files.WithVersions(0))
	storetest.MustUpdateDocument(t, s0, scope, func(*memory.Document) error { return nil })
	if vs, _ := s0.ListVersions(t.Context(), scope); len(vs) != 0 {
		t.Errorf("versions after a save with WithVersions(0) = %v, want none", vs)
	}
}

// TestOpenCleansCrashLeftovers plants what a crash can leave — document
// and version temp files, a half-deleted scope — and checks that Open
// removes them and nothing else.
func TestOpenCleansCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "u", AgentName: "a"}
	s := mustOpen(t, dir)
	for range 2 {
		storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })
	}
	sd := scopeDir(dir, scope)
	plant := []string{
		filepath.Join(sd, ".memory.json.123456.tmp"),
		filepath.Join(sd, "versions", ".memory.000000000009.json.99.tmp"),
		filepath.Join(dir, "users", "gone~deleted~0011", "memory.json"),
		filepath.Join(dir, "users", "u", "agents", "b~deleted~22", "turns.jsonl"),
	}
	for _, p := range plant {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustOpen(t, dir)
	for _, p := range plant {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived Open (err %v)", p, err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "users", "gone~deleted~0011"), filepath.Join(dir, "users", "u", "agents", "b~deleted~22")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("tombstone %s survived Open", p)
		}
	}
	if d := storetest.MustLoadDocument(t, s, scope); d.Revision != 2 {
		t.Errorf("document revision = %d after cleanup, want 2", d.Revision)
	}
	if vs, _ := s.ListVersions(t.Context(), scope); len(vs) != 1 {
		t.Errorf("versions after cleanup = %v, want the one real version", vs)
	}
}

// TestDeleteSeenByOtherStore deletes a scope through one Store while
// another (as in a second server process) holds the scope's files open,
// and checks that the other Store's next writes land in the new scope
// directory — not in the deleted one, where they would be lost.
func TestDeleteSeenByOtherStore(t *testing.T) {
	dir := t.TempDir()
	a, b := mustOpen(t, dir), mustOpen(t, dir)
	scope := memory.Scope{UserID: "u"}
	storetest.MustAppendTurns(t, b, scope, storetest.NewTurns("t", 0, 3)...)
	storetest.MustUpdateDocument(t, b, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = "old"; return nil })
	storetest.MustReadTurns(t, b, scope, 0)

	if err := a.DeleteScope(t.Context(), scope); err != nil {
		t.Fatalf("DeleteScope() error: %v", err)
	}
	if got := storetest.MustReadTurns(t, b, scope, 0); len(got) != 0 {
		t.Errorf("other store reads %d turns after delete, want 0", len(got))
	}
	if d := storetest.MustLoadDocument(t, b, scope); d.Revision != 0 || d.User.TopOfMind.Summary != "" {
		t.Errorf("other store loads revision %d %q after delete, want a new document", d.Revision, d.User.TopOfMind.Summary)
	}
	got := storetest.MustAppendTurns(t, b, scope, storetest.NewTurn("t", 7))
	if got[0].Seq != 1 {
		t.Errorf("append through the other store after delete: Seq %d, want 1", got[0].Seq)
	}
	storetest.MustUpdateDocument(t, b, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = "new"; return nil })
	if turns := storetest.MustReadTurns(t, a, scope, 0); len(turns) != 1 {
		t.Errorf("deleting store sees %d turns, want the 1 appended after the delete", len(turns))
	}
	if d := storetest.MustLoadDocument(t, a, scope); d.User.TopOfMind.Summary != "new" {
		t.Errorf("deleting store loads %q, want the document saved after the delete", d.User.TopOfMind.Summary)
	}
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if strings.Contains(p, "~deleted~") {
			names = append(names, p)
		}
		return nil
	})
	if len(names) > 0 {
		t.Errorf("tombstones left: %v", names)
	}
	if scopes, _ := a.Scopes(t.Context()); !slices.Equal(scopes, []memory.Scope{scope}) {
		t.Errorf("Scopes() = %v", scopes)
	}
}
