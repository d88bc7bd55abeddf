package files_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// storeOp is one store operation run against a planted link.
type storeOp struct {
	name string
	run  func(ctx context.Context, s *files.Store) error
}

func opsOn(scope memory.Scope) []storeOp {
	return []storeOp{
		{"AppendTurns", func(ctx context.Context, s *files.Store) error {
			_, err := s.AppendTurns(ctx, scope, []memory.Turn{storetest.NewTurn("t", 50)})
			return err
		}},
		{"ReadTurns", func(ctx context.Context, s *files.Store) error {
			_, err := s.ReadTurns(ctx, scope, 0)
			return err
		}},
		{"LoadDocument", func(ctx context.Context, s *files.Store) error {
			_, err := s.LoadDocument(ctx, scope)
			return err
		}},
		{"UpdateDocument", func(ctx context.Context, s *files.Store) error {
			_, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error {
				d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprint("f", len(d.Facts)), Content: "new"})
				return nil
			})
			return err
		}},
		{"ListVersions", func(ctx context.Context, s *files.Store) error {
			_, err := s.ListVersions(ctx, scope)
			return err
		}},
		{"RestoreVersion", func(ctx context.Context, s *files.Store) error {
			_, err := s.RestoreVersion(ctx, scope, 1)
			return err
		}},
		{"DeleteTurns", func(ctx context.Context, s *files.Store) error {
			_, err := s.DeleteTurns(ctx, scope, func(memory.Turn) bool { return true })
			return err
		}},
		{"OpenPageIndex", func(ctx context.Context, s *files.Store) error {
			rc, err := s.OpenPageIndex(ctx, scope)
			if rc != nil {
				rc.Close()
			}
			return err
		}},
		{"SavePageIndex", func(ctx context.Context, s *files.Store) error {
			return s.SavePageIndex(ctx, scope, []byte("index\n"))
		}},
		{"LoadMidTerm", func(ctx context.Context, s *files.Store) error {
			_, err := s.LoadMidTerm(ctx, scope)
			return err
		}},
		{"SaveMidTerm", func(ctx context.Context, s *files.Store) error {
			return s.SaveMidTerm(ctx, scope, &memory.MidTermState{Version: 1})
		}},
		{"LoadVectors", func(ctx context.Context, s *files.Store) error {
			_, err := s.LoadVectors(ctx, scope, "m")
			return err
		}},
		{"SaveVectors", func(ctx context.Context, s *files.Store) error {
			return s.SaveVectors(ctx, scope, "m", []memory.PageVector{{TurnID: "x", Vector: []float32{1}}})
		}},
		{"ReplaceVectors", func(ctx context.Context, s *files.Store) error {
			return s.ReplaceVectors(ctx, scope, "m", []memory.PageVector{{TurnID: "x", Vector: []float32{1}}})
		}},
		{"Scopes", func(ctx context.Context, s *files.Store) error {
			_, err := s.Scopes(ctx)
			return err
		}},
		{"DeleteScope", func(ctx context.Context, s *files.Store) error {
			return s.DeleteScope(ctx, scope)
		}},
	}
}

// TestPlantedSymlinks plants each link of issue 16 in a data directory
// and runs every store operation on the scope it reaches: nothing outside
// the data directory may be read, written, truncated or deleted, and
// every operation that meets the link fails with files.ErrSymlink naming
// it relative to the data directory.
func TestPlantedSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	bob := memory.Scope{UserID: "bob"}
	dir1 := memory.Scope{UserID: "bob", AgentName: "dir1"}
	versionDoc := `{"version":"1.0","facts":[{"id":"f1","content":"OUTSIDE-FACT"}],"revision":1}` + "\n"
	torn := "not a turn log, and no final newline"
	tests := []struct {
		name  string
		link  string // relative to the data directory
		scope memory.Scope
		// outside builds the link's target in out and returns it.
		outside func(t *testing.T, out string) string
		// notErr lists operations that may succeed (they do not reach the link).
		notErr []string
	}{
		{"agents dir", "users/bob/agents", dir1, func(t *testing.T, out string) string {
			mustWrite(t, filepath.Join(out, "dir1", "precious.txt"), "keep me")
			mustWrite(t, filepath.Join(out, "dir1", "turns.jsonl"), torn)
			return out
		}, nil},
		{"agents dir, user scope", "users/bob/agents", bob, func(t *testing.T, out string) string {
			mustWrite(t, filepath.Join(out, "dir1", "precious.txt"), "keep me")
			return out
		}, []string{"AppendTurns", "ReadTurns", "LoadDocument", "UpdateDocument", "ListVersions", "RestoreVersion", "DeleteTurns",
			"OpenPageIndex", "SavePageIndex", "LoadMidTerm", "SaveMidTerm", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{"turn log without final newline", "users/bob/turns.jsonl", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "notes.txt")
			mustWrite(t, p, torn)
			return p
		}, []string{"LoadDocument", "UpdateDocument", "ListVersions", "RestoreVersion",
			"OpenPageIndex", "SavePageIndex", "LoadMidTerm", "SaveMidTerm", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{"versions dir", "users/bob/versions", bob, func(t *testing.T, out string) string {
			for i := 1; i <= 8; i++ {
				mustWrite(t, filepath.Join(out, fmt.Sprintf("memory.%012d.json", i)), versionDoc)
			}
			return out
		}, []string{"AppendTurns", "ReadTurns", "LoadDocument", "DeleteTurns",
			"OpenPageIndex", "SavePageIndex", "LoadMidTerm", "SaveMidTerm", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{"user dir", "users/bob", bob, func(t *testing.T, out string) string {
			mustWrite(t, filepath.Join(out, "memory.json"), versionDoc)
			mustWrite(t, filepath.Join(out, "turns.jsonl"), torn)
			return out
		}, nil},
		{"users dir", "users", bob, func(t *testing.T, out string) string {
			mustWrite(t, filepath.Join(out, "bob", "memory.json"), versionDoc)
			return out
		}, nil},
		{"memory.json", "users/bob/memory.json", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "facts.json")
			mustWrite(t, p, versionDoc)
			return p
		}, []string{"AppendTurns", "ReadTurns", "ListVersions", "DeleteTurns",
			"OpenPageIndex", "SavePageIndex", "LoadMidTerm", "SaveMidTerm", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{".lock", "users/bob/.lock", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "lockfile")
			mustWrite(t, p, "")
			return p
		}, []string{"ReadTurns", "LoadDocument", "ListVersions", "OpenPageIndex", "LoadMidTerm", "LoadVectors"}},
		{"pages.idx", "users/bob/pages.idx", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "index")
			mustWrite(t, p, "secret index")
			return p
		}, []string{"AppendTurns", "ReadTurns", "LoadDocument", "UpdateDocument", "ListVersions", "RestoreVersion",
			"LoadMidTerm", "SaveMidTerm", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{"midterm.json", "users/bob/midterm.json", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "mid.json")
			mustWrite(t, p, `{"version":1,"sessions":[{"id":"s","summary":"OUTSIDE"}]}`)
			return p
		}, []string{"AppendTurns", "ReadTurns", "LoadDocument", "UpdateDocument", "ListVersions", "RestoreVersion",
			"OpenPageIndex", "SavePageIndex", "LoadVectors", "SaveVectors", "ReplaceVectors"}},
		{"vectors.bin", "users/bob/vectors.bin", bob, func(t *testing.T, out string) string {
			p := filepath.Join(out, "vec.bin")
			mustWrite(t, p, "mnemo-vectors 1\tm\n\x05torn")
			return p
		}, []string{"AppendTurns", "ReadTurns", "LoadDocument", "UpdateDocument", "ListVersions", "RestoreVersion",
			"OpenPageIndex", "SavePageIndex", "LoadMidTerm", "SaveMidTerm"}},
	}
	for _, warm := range []bool{false, true} {
		for _, tc := range tests {
			for _, op := range opsOn(tc.scope) {
				name := tc.name + "/" + op.name
				if warm {
					name = "after open/" + name
				}
				t.Run(name, func(t *testing.T) {
					plantAndRun(t, warm, tc.link, tc.scope, tc.outside, tc.notErr, op)
				})
			}
		}
	}
}

// plantAndRun is one case of TestPlantedSymlinks. When warm, the link is
// planted after the store has used the scope (its directory, lock and
// log are open and kept), and the same store then runs op.
func plantAndRun(t *testing.T, warm bool, linkRel string, scope memory.Scope, outside func(*testing.T, string) string, notErr []string, op storeOp) {
	data := filepath.Join(t.TempDir(), "data")
	out := t.TempDir()
	seed := mustOpen(t, data)
	// A scope with turns, a document and kept versions, so that
	// every operation has something to work on.
	storetest.MustAppendTurns(t, seed, scope, storetest.NewTurn("t", 1))
	for range 3 {
		storetest.MustUpdateDocument(t, seed, scope, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprint("f", len(d.Facts)), Content: "inside"})
			return nil
		})
	}
	seed.Close()

	var s *files.Store
	if warm {
		var err error
		if s, err = files.Open(data, files.WithLogger(testLogger(t)), files.WithVersions(2)); err != nil {
			t.Fatal(err)
		}
		storetest.MustReadTurns(t, s, scope, 0)
		storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 2))
		storetest.MustLoadDocument(t, s, scope)
	}
	target := outside(t, out)
	link := filepath.Join(data, filepath.FromSlash(linkRel))
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	before := testutil.SnapshotTree(t, out)

	var err error
	if !warm {
		s, err = files.Open(data, files.WithLogger(testLogger(t)), files.WithVersions(2))
	}
	if err == nil {
		err = op.run(t.Context(), s)
		s.Close()
	}
	if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, out)); len(d) > 0 {
		t.Errorf("%s through link %s changed the outside directory: %v", op.name, linkRel, d)
	}
	// Listing scopes reads only the scope directories and the
	// turn log, document and agents entries.
	fileLink := !slices.Contains([]string{"users", "users/bob", "users/bob/agents", "users/bob/turns.jsonl"}, linkRel)
	if slices.Contains(notErr, op.name) || op.name == "Scopes" && fileLink {
		return
	}
	if !errors.Is(err, files.ErrSymlink) || !strings.Contains(err.Error(), linkRel) {
		t.Errorf("%s error = %v, want files.ErrSymlink naming %s", op.name, err, linkRel)
	}
	if err != nil && strings.Contains(err.Error(), out) {
		t.Errorf("%s error = %v, names the link's target", op.name, err)
	}
}

// TestSymlinkedDataDir: the data directory itself may be a link.
func TestSymlinkedDataDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, link)
	scope := memory.Scope{UserID: "alice"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 1))
	if got := storetest.MustReadTurns(t, s, scope, 0); len(got) != 1 {
		t.Errorf("ReadTurns() = %d turns, want 1", len(got))
	}
	if err := s.DeleteScope(t.Context(), scope); err != nil {
		t.Errorf("DeleteScope() error: %v", err)
	}
	if _, err := os.Stat(real); err != nil {
		t.Errorf("data directory gone after DeleteScope: %v", err)
	}
	links, err := files.FindSymlinks(link)
	if err != nil || len(links) != 0 {
		t.Errorf("FindSymlinks() = %v, %v; want none (the data directory itself is not reported)", links, err)
	}
}

func TestFindSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	data := t.TempDir()
	out := t.TempDir()
	for _, p := range []string{"users/bob/agents", "users/carol/turns.jsonl", "users/carol/agents/x/versions"} {
		full := filepath.Join(data, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, full); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(out, "deep", "file"), "x")
	got, err := files.FindSymlinks(data)
	want := []string{"users/bob/agents", "users/carol/agents/x/versions", "users/carol/turns.jsonl"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("FindSymlinks() = %q, %v; want %q", got, err, want)
	}
	if got, err := files.FindSymlinks(filepath.Join(data, "missing")); err != nil || len(got) != 0 {
		t.Errorf("FindSymlinks(missing) = %q, %v; want none", got, err)
	}
}

func mustWrite(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}
