package files_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

func TestCorruptDocument(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{"not json", "{\"version\": \"1.0\", \"facts\": ["},
		{"empty file", ""},
		{"null", "null"},
		{"no version", `{"facts":[]}`},
		{"next major version", `{"version":"2.0","facts":[],"revision":5}`},
		{"version 10", `{"version":"10.1","facts":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			scope := memory.Scope{UserID: "doc"}
			path := filepath.Join(scopeDir(dir, scope), "memory.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s := mustOpen(t, dir)
			if _, err := s.LoadDocument(t.Context(), scope); !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadDocument error = %v, want memory.ErrCorrupt naming %s", err, path)
			}
			called := false
			_, err := s.UpdateDocument(t.Context(), scope, func(*memory.Document) error { called = true; return nil })
			if !errors.Is(err, memory.ErrCorrupt) || called {
				t.Errorf("UpdateDocument error = %v (fn called: %v), want memory.ErrCorrupt without calling fn", err, called)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.content {
				t.Errorf("memory.json changed to %q; user data must never be replaced", got)
			}
		})
	}
}

func TestOpenRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	user := memory.Scope{UserID: "alice"}
	agent := memory.Scope{UserID: "alice", AgentName: "coder"}
	busy := memory.Scope{UserID: "bob"}
	s := mustOpen(t, dir)
	for _, sc := range []memory.Scope{user, agent, busy} {
		storetest.MustUpdateDocument(t, s, sc, func(*memory.Document) error { return nil })
	}
	write := func(path string) string {
		t.Helper()
		if err := os.WriteFile(path, []byte("{partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stale := []string{
		write(filepath.Join(scopeDir(dir, user), ".memory.json.123456.tmp")),
		write(filepath.Join(scopeDir(dir, agent), ".memory.json.987.tmp")),
	}
	keep := []string{
		write(filepath.Join(scopeDir(dir, user), "notes.tmp")),
		write(filepath.Join(scopeDir(dir, user), ".memory.json.tmp.bak")),
	}

	// While bob's scope is locked by an update in progress, its temp file
	// may be that update's own, so it must survive.
	locked, release := make(chan struct{}), make(chan struct{})
	go func() {
		s.UpdateDocument(t.Context(), busy, func(*memory.Document) error {
			close(locked)
			<-release
			return errors.New("never saved")
		})
	}()
	<-locked
	keep = append(keep, write(filepath.Join(scopeDir(dir, busy), ".memory.json.555.tmp")))
	mustOpen(t, dir)
	close(release)

	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale temp file %s still exists after Open (err %v)", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed by Open: %v", p, err)
		}
	}
}

// TestOtherInstance uses two Stores on one directory, as two processes
// would: each sees the other's turns and documents.
func TestOtherInstance(t *testing.T) {
	dir := t.TempDir()
	a, b := mustOpen(t, dir), mustOpen(t, dir)
	scope := memory.Scope{UserID: "shared", AgentName: "x"}

	storetest.MustAppendTurns(t, a, scope, storetest.NewTurns("a", 0, 2)...)
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, b, scope, 0), 1, 2)
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, b, scope, storetest.NewTurns("b", 0, 3)...), 3, 5)
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, a, scope, 2), 3, 5)
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, a, scope, storetest.NewTurn("a", 2)), 6, 6)
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, b, scope, 5), 6, 6)

	if d := storetest.MustLoadDocument(t, a, scope); d.Revision != 0 {
		t.Fatalf("new document revision = %d", d.Revision)
	}
	for i := int64(1); i <= 3; i++ {
		writer, reader := a, b
		if i%2 == 0 {
			writer, reader = b, a
		}
		storetest.MustLoadDocument(t, reader, scope) // cache the old one
		storetest.MustUpdateDocument(t, writer, scope, func(d *memory.Document) error {
			d.User.TopOfMind.Summary = strings.Repeat("x", int(i))
			return nil
		})
		if d := storetest.MustLoadDocument(t, reader, scope); d.Revision != i || len(d.User.TopOfMind.Summary) != int(i) {
			t.Errorf("after update %d by the other store, LoadDocument = revision %d", i, d.Revision)
		}
	}
}

// TestDocumentChangedInPlace changes memory.json without changing its size,
// inode or modification time, as a save in the same clock tick into a
// reused inode would look. A freshly written file's stat is not trusted.
func TestDocumentChangedInPlace(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "inplace"}
	path := filepath.Join(scopeDir(dir, scope), "memory.json")
	s := mustOpen(t, dir)
	storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.User.TopOfMind.Summary = "aaaa"
		return nil
	})
	storetest.MustLoadDocument(t, s, scope)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Replace(data, []byte(`"aaaa"`), []byte(`"bbbb"`), 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := storetest.MustLoadDocument(t, s, scope).User.TopOfMind.Summary; got != "bbbb" {
		t.Errorf("LoadDocument after an in-place change = %q, want %q", got, "bbbb")
	}
}

func TestTwoStoresConcurrentUpdate(t *testing.T) {
	dir := t.TempDir()
	stores := []memory.Store{mustOpen(t, dir), mustOpen(t, dir)}
	storetest.ConcurrentUpdate(t, stores, memory.Scope{UserID: "two-doc"}, 4, 10)
}

func TestWithClock(t *testing.T) {
	now := time.Date(2030, time.January, 2, 3, 4, 5, 6, time.FixedZone("UTC+9", 9*3600))
	s := mustOpen(t, t.TempDir(), files.WithClock(func() time.Time { return now }))
	d := storetest.MustUpdateDocument(t, s, memory.Scope{UserID: "clock"}, func(*memory.Document) error { return nil })
	if !d.LastUpdated.Equal(now) || d.LastUpdated.Location() != time.UTC {
		t.Errorf("LastUpdated = %v, want %v in UTC", d.LastUpdated, now.UTC())
	}
}

func TestUpdateRefusesUnknownVersion(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "version"}
	s := mustOpen(t, dir)
	before := storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })
	if _, err := s.UpdateDocument(t.Context(), scope, func(d *memory.Document) error {
		d.Version = "2.0"
		return nil
	}); err == nil {
		t.Fatal("UpdateDocument saving version 2.0: no error, want a refusal")
	}
	if d := storetest.MustLoadDocument(t, s, scope); d.Revision != before.Revision || d.Version != memory.SchemaVersion {
		t.Errorf("after the refusal: version %q revision %d, want %q revision %d", d.Version, d.Revision, memory.SchemaVersion, before.Revision)
	}
}
