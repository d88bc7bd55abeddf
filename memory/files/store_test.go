package files_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Store {
		return mustOpen(t, t.TempDir())
	})
}

// mustOpen opens a store on dir that logs to the test and closes with it.
func mustOpen(tb testing.TB, dir string, opts ...files.Option) *files.Store {
	tb.Helper()
	opts = append([]files.Option{files.WithLogger(testLogger(tb))}, opts...)
	s, err := files.Open(dir, opts...)
	if err != nil {
		tb.Fatalf("Open(%s) error: %v", dir, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close() error: %v", err)
		}
	})
	return s
}

// testLogger sends the store's log to the test log.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// scopeDir is where a scope's files live under dir.
func scopeDir(dir string, scope memory.Scope) string {
	p := filepath.Join(dir, "users", scope.UserID)
	if scope.AgentName != "" {
		p = filepath.Join(p, "agents", scope.AgentName)
	}
	return p
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits on Windows")
	}
	dir := filepath.Join(t.TempDir(), "data")
	s := mustOpen(t, dir)
	scope := memory.Scope{UserID: "alice", AgentName: "coder"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 0))
	storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })

	sd := scopeDir(dir, scope)
	tests := []struct {
		path string
		want fs.FileMode
	}{
		{dir, fs.ModeDir | 0o700},
		{filepath.Join(dir, "users"), fs.ModeDir | 0o700},
		{filepath.Join(dir, "users", "alice"), fs.ModeDir | 0o700},
		{filepath.Join(dir, "users", "alice", "agents"), fs.ModeDir | 0o700},
		{sd, fs.ModeDir | 0o700},
		{filepath.Join(sd, "turns.jsonl"), 0o600},
		{filepath.Join(sd, "memory.json"), 0o600},
		{filepath.Join(sd, ".lock"), 0o600},
	}
	for _, tc := range tests {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Errorf("Stat(%s) error: %v", tc.path, err)
			continue
		}
		if got := fi.Mode(); got != tc.want {
			t.Errorf("mode of %s = %v, want %v", tc.path, got, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(sd, "versions")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("versions/ exists (err %v) before any document was replaced", err)
	}

	// Replacing the document keeps the old one in versions/, private too.
	storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })
	for path, want := range map[string]fs.FileMode{
		filepath.Join(sd, "versions"):                             fs.ModeDir | 0o700,
		filepath.Join(sd, "versions", "memory.000000000001.json"): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("Stat(%s) error: %v", path, err)
		} else if got := fi.Mode(); got != want {
			t.Errorf("mode of %s = %v, want %v", path, got, want)
		}
	}
}

func TestInvalidScopeTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	ctx := t.Context()
	for _, sc := range []memory.Scope{
		{UserID: "../x"}, {UserID: "a/b"}, {UserID: ".."}, {UserID: "."},
		{UserID: "ok", AgentName: ".."}, {UserID: "ok", AgentName: "../../x"}, {UserID: "ok", AgentName: "a/b"},
	} {
		_, err1 := s.AppendTurns(ctx, sc, storetest.NewTurns("t", 0, 1))
		_, err2 := s.ReadTurns(ctx, sc, 0)
		_, err3 := s.LoadDocument(ctx, sc)
		_, err4 := s.UpdateDocument(ctx, sc, func(*memory.Document) error { return nil })
		for i, err := range []error{err1, err2, err3, err4} {
			if !errors.Is(err, memory.ErrInvalidInput) {
				t.Errorf("call %d with scope %q/%q: error = %v, want memory.ErrInvalidInput", i, sc.UserID, sc.AgentName, err)
			}
		}
	}
	var found []string
	filepath.WalkDir(filepath.Dir(dir), func(path string, d fs.DirEntry, err error) error {
		if path != filepath.Dir(dir) && path != dir {
			found = append(found, path)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("invalid scopes created %v", found)
	}
}

func TestClosed(t *testing.T) {
	s, err := files.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	scope := memory.Scope{UserID: "closed"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 0))
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() error: %v", err)
	}
	ctx := t.Context()
	_, err1 := s.AppendTurns(ctx, scope, storetest.NewTurns("t", 1, 1))
	_, err2 := s.ReadTurns(ctx, scope, 0)
	_, err3 := s.LoadDocument(ctx, scope)
	_, err4 := s.UpdateDocument(ctx, scope, func(*memory.Document) error { return nil })
	_, err5 := s.Scopes(ctx)
	for i, err := range []error{err1, err2, err3, err4, err5} {
		if !errors.Is(err, fs.ErrClosed) {
			t.Errorf("call %d after Close: error = %v, want fs.ErrClosed", i, err)
		}
	}
}

func TestScopesIgnoresJunk(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	good := memory.Scope{UserID: "alice", AgentName: "coder"}
	storetest.MustAppendTurns(t, s, good, storetest.NewTurn("t", 0))
	for _, p := range []string{"users/bad name", "users/.hidden..x/agents/a b", "users/bob/agents/empty", "users/carol/agents"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "users", "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users", "bad name", "memory.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := s.Scopes(t.Context())
	if err != nil {
		t.Fatalf("Scopes() error: %v", err)
	}
	if want := []memory.Scope{good}; !slices.Equal(got, want) {
		t.Errorf("Scopes() = %v, want %v", got, want)
	}
}
