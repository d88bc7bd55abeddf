package files_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// mountTmpfs mounts a tmpfs of size bytes for the test, or skips it when
// the test may not mount (not root, or no mount namespace rights).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestDiskFullAndReadOnly runs the store on a real, tiny tmpfs: filled up
// (ENOSPC) and then remounted read-only (EROFS). Every write must fail
// with an error that says so, leave the turn log and memory.json exactly
// as they were, leave no temp file behind, and work again once space is
// freed.
func TestDiskFullAndReadOnly(t *testing.T) {
	dir := mountTmpfs(t, "512k")
	s := mustOpen(t, dir)
	ctx := t.Context()
	scope := memory.Scope{UserID: "u", AgentName: "a"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, 3)...)
	storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = "before"; return nil })
	sd := scopeDir(dir, scope)
	turnsBefore := mustRead(t, filepath.Join(sd, "turns.jsonl"))
	docBefore := mustRead(t, filepath.Join(sd, "memory.json"))

	big := storetest.NewTurn("t", 3)
	big.User = strings.Repeat("x", 64<<10)
	checkUnchanged := func(when string) {
		t.Helper()
		if got := mustRead(t, filepath.Join(sd, "turns.jsonl")); got != turnsBefore {
			t.Errorf("%s: turns.jsonl changed (%d bytes, was %d)", when, len(got), len(turnsBefore))
		}
		if got := mustRead(t, filepath.Join(sd, "memory.json")); got != docBefore {
			t.Errorf("%s: memory.json changed", when)
		}
		if turns := storetest.MustReadTurns(t, s, scope, 0); len(turns) != 3 {
			t.Errorf("%s: %d turns readable, want 3", when, len(turns))
		}
		if d := storetest.MustLoadDocument(t, s, scope); d.User.TopOfMind.Summary != "before" {
			t.Errorf("%s: document = %q, want the one saved before", when, d.User.TopOfMind.Summary)
		}
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".tmp") {
				t.Errorf("%s: temp file left: %s", when, p)
			}
			return nil
		})
	}

	// Fill the file system.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling tmpfs: %v", err)
			}
			break
		}
	}
	f.Close()

	if _, err := s.AppendTurns(ctx, scope, []memory.Turn{big}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("AppendTurns on a full disk: error = %v, want ENOSPC", err)
	}
	if _, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = strings.Repeat("y", 32<<10); return nil }); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("UpdateDocument on a full disk: error = %v, want ENOSPC", err)
	}
	checkUnchanged("disk full")

	// Space freed: writes work again and numbering continues.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	got := storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 3))
	if got[0].Seq != 4 {
		t.Errorf("after freeing space, Seq = %d, want 4", got[0].Seq)
	}
	storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = "before"; return nil })
	turnsBefore = mustRead(t, filepath.Join(sd, "turns.jsonl"))
	docBefore = mustRead(t, filepath.Join(sd, "memory.json"))

	// A file system with files open for writing cannot be remounted
	// read-only: close the store, remount, and open a new one on it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	s = mustOpen(t, dir)
	if _, err := s.AppendTurns(ctx, scope, []memory.Turn{big}); !errors.Is(err, syscall.EROFS) {
		t.Errorf("AppendTurns on a read-only disk: error = %v, want EROFS", err)
	}
	if _, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error { d.User.TopOfMind.Summary = "after"; return nil }); !errors.Is(err, syscall.EROFS) {
		t.Errorf("UpdateDocument on a read-only disk: error = %v, want EROFS", err)
	}
	if err := s.DeleteScope(ctx, scope); !errors.Is(err, syscall.EROFS) {
		t.Errorf("DeleteScope on a read-only disk: error = %v, want EROFS", err)
	}
	if turns := storetest.MustReadTurns(t, s, scope, 0); len(turns) != 4 {
		t.Errorf("read-only: %d turns readable, want 4", len(turns))
	}
	if got := mustRead(t, filepath.Join(sd, "memory.json")); got != docBefore {
		t.Errorf("read-only: memory.json changed")
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT, ""); err != nil {
		t.Fatalf("remount read-write: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
