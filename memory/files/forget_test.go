package files_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// grepDir returns the files under dir whose bytes contain text.
func grepDir(tb testing.TB, dir, text string) []string {
	tb.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(text)) {
			rel, _ := filepath.Rel(dir, p)
			hits = append(hits, rel)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("grep %s: %v", dir, err)
	}
	return hits
}

// saveCaches writes the three caches of scope through s, each quoting
// text; it returns their errors.
func saveCaches(ctx context.Context, s *files.Store, scope memory.Scope, text, turnID string) []error {
	return []error{
		s.SavePageIndex(ctx, scope, []byte(`{"version":1}`+"\n"+text)),
		s.SaveMidTerm(ctx, scope, &memory.MidTermState{Version: 1, Sessions: []*memory.MidTermSession{{ID: "s1", Summary: text}}}),
		s.SaveVectors(ctx, scope, "m", []memory.PageVector{{TurnID: turnID, Vector: []float32{1, 2}}}),
	}
}

// TestForgetEverywhere: after each kind of delete made through one Store,
// another Store on the same directory (a second process) that had the
// scope loaded cannot write the forgotten text back, and no file of the
// data directory holds it, before and after a reopen.
func TestForgetEverywhere(t *testing.T) {
	const secret = "FORGET-ME-7731"
	user := memory.Scope{UserID: "bob"}
	agent := memory.Scope{UserID: "bob", AgentName: "coder"}
	tests := []struct {
		name  string
		scope memory.Scope // where the secret is said
		// forget removes it through the other store and returns the
		// scope to keep using.
		forget func(t *testing.T, s *files.Store, secretTurn memory.Turn)
		// recreate says the scope is written again after the forget.
		recreate bool
	}{
		{"turn", user, func(t *testing.T, s *files.Store, tu memory.Turn) {
			if _, err := s.DeleteTurns(t.Context(), user, func(x memory.Turn) bool { return x.ID == tu.ID }); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"thread", agent, func(t *testing.T, s *files.Store, tu memory.Turn) {
			if _, err := s.DeleteTurns(t.Context(), agent, func(x memory.Turn) bool { return x.ThreadID == tu.ThreadID }); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"agent", agent, func(t *testing.T, s *files.Store, _ memory.Turn) {
			if err := s.DeleteScope(t.Context(), agent); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"agent, then written again", agent, func(t *testing.T, s *files.Store, _ memory.Turn) {
			if err := s.DeleteScope(t.Context(), agent); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"user", agent, func(t *testing.T, s *files.Store, _ memory.Turn) {
			if err := s.DeleteScope(t.Context(), user); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"user, then written again", user, func(t *testing.T, s *files.Store, _ memory.Turn) {
			if err := s.DeleteScope(t.Context(), user); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			a := mustOpen(t, dir) // the process that had the scope loaded
			b := mustOpen(t, dir) // the one that forgets

			keep := storetest.NewTurn("keep", 1)
			said := storetest.NewTurn("secret", 2)
			said.User = "my code is " + secret
			turns := storetest.MustAppendTurns(t, a, tc.scope, keep, said)
			storetest.MustReadTurns(t, a, tc.scope, 0)
			for _, err := range saveCaches(ctx, a, tc.scope, secret, turns[1].ID) {
				if err != nil {
					t.Fatalf("saving caches before the forget: %v", err)
				}
			}

			tc.forget(t, b, turns[1])
			if hits := grepDir(t, dir, secret); len(hits) > 0 {
				t.Errorf("after forgetting a %s, %q is still in %v", tc.name, secret, hits)
			}
			if tc.recreate {
				storetest.MustAppendTurns(t, b, tc.scope, storetest.NewTurn("new", 3))
			}

			// The first process, still holding the old state, saves its
			// caches (as at shutdown): every save is refused.
			for i, err := range saveCaches(ctx, a, tc.scope, secret, turns[1].ID) {
				if err == nil {
					t.Errorf("cache save %d after the forget succeeded, want it refused", i)
				}
				if tc.name == "turn" || tc.name == "thread" || tc.recreate {
					if !errors.Is(err, files.ErrStale) {
						t.Errorf("cache save %d error = %v, want files.ErrStale", i, err)
					}
				}
			}
			if hits := grepDir(t, dir, secret); len(hits) > 0 {
				t.Errorf("after the stale saves, %q is in %v", secret, hits)
			}
			if !tc.recreate && tc.name != "turn" && tc.name != "thread" {
				if _, err := os.Stat(filepath.Join(scopeDir(dir, tc.scope))); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("scope directory after the stale saves: %v, want it still deleted", err)
				}
			}

			// Once it reads the scope afresh, it may save again.
			storetest.MustReadTurns(t, a, tc.scope, 0)
			if err := a.SaveMidTerm(ctx, tc.scope, &memory.MidTermState{Version: 1}); err != nil && (tc.recreate || tc.name == "turn" || tc.name == "thread") {
				t.Errorf("SaveMidTerm after reading afresh: %v", err)
			}

			a.Close()
			b.Close()
			c := mustOpen(t, dir)
			for _, got := range storetest.MustReadTurns(t, c, tc.scope, 0) {
				if got.ID == turns[1].ID {
					t.Errorf("forgotten turn %s read back after reopen", got.ID)
				}
			}
			if hits := grepDir(t, dir, secret); len(hits) > 0 {
				t.Errorf("after reopen, %q is in %v", secret, hits)
			}
		})
	}
}

// TestForgetFactScrubsVersions: a fact removed from the document and
// scrubbed from the kept versions is in no file.
func TestForgetFactScrubsVersions(t *testing.T) {
	const secret = `PIN "4321" & <more>`
	dir := t.TempDir()
	s := mustOpen(t, dir)
	scope := memory.Scope{UserID: "bob"}
	for _, c := range []string{"likes tea", secret, "plays chess"} {
		storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: c[:4], Content: c})
			return nil
		})
	}
	storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.Facts = slices.DeleteFunc(d.Facts, func(f memory.Fact) bool { return f.Content == secret })
		return nil
	})
	if n, err := s.ScrubVersions(t.Context(), scope, []string{secret}); err != nil || n != 2 {
		t.Fatalf("ScrubVersions() = %d, %v; want 2", n, err)
	}
	// encodeDocument does not escape <, > and &; quotes are escaped.
	for _, text := range []string{secret, `PIN \"4321\" & <more>`} {
		if hits := grepDir(t, dir, text); len(hits) > 0 {
			t.Errorf("%q still in %v", text, hits)
		}
	}
}
