package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// withFileStore runs f on a service over the file store in dir, then
// closes both (the service saving its caches).
func withFileStore(t *testing.T, dir string, f func(*engine.Service), opts ...engine.Option) {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc := engine.NewTestService(t, store, memory.DefaultConfig(), opts...)
	defer svc.Close(context.Background())
	f(svc)
}

// TestPageIndexSnapshotFile: a restart on the file store decodes
// pages.idx as it reads the file (lexical.ReadSized) and, whatever was
// done to the file, retrieves exactly what a restart without it
// retrieves.
func TestPageIndexSnapshotFile(t *testing.T) {
	base := filepath.Join(t.TempDir(), "data")
	withFileStore(t, base, func(svc *engine.Service) {
		for i := range 600 {
			req := memory.AddRequest{ThreadID: fmt.Sprint("t", i%7),
				UserInput:     fmt.Sprintf("question %d about the kyoto temples and the %d marathon", i, i%13),
				AgentResponse: fmt.Sprintf("answer %d: sourdough hydration %d, postgres vacuum", i, i%11)}
			if _, err := svc.Add(t.Context(), req); err != nil {
				t.Fatal(err)
			}
		}
	})
	snap := filepath.Join(base, "users", memory.DefaultUserID, "pages.idx")
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no snapshot saved at close: %v", err)
	}
	nl := bytes.IndexByte(good, '\n')
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x10; return b }
	damaged := map[string][]byte{
		"as saved":          good,
		"truncated":         good[:len(good)*2/3],
		"header only":       good[:nl+1],
		"no end of header":  good[:nl],
		"a body byte":       flip(nl + 1 + (len(good)-nl)/2),
		"the checksum":      flip(len(good) - 1),
		"bytes after it":    append(bytes.Clone(good), 1, 2, 3),
		"empty":             {},
		"header of another": append([]byte(`{"version":1,"pages":3,"lastSeq":3}`+"\n"), good[nl+1:]...),
	}
	queries := []string{"kyoto temples", "question 17", "sourdough hydration 4", "postgres vacuum marathon"}
	// retrieve returns the pages each query retrieves after a restart on
	// dir, and whether the snapshot was used.
	retrieve := func(dir string) ([][]memory.PageHit, bool) {
		var out [][]memory.PageHit
		var logs testutil.LockedBuffer
		withFileStore(t, dir, func(svc *engine.Service) {
			for _, q := range queries {
				res, err := svc.Retrieve(t.Context(), memory.RetrieveRequest{Query: q, MaxResults: 20})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, res.Pages)
			}
		}, engine.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		return out, strings.Contains(logs.String(), "page index read from its snapshot")
	}
	copyData := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	noSnap := copyData("none")
	if err := os.Remove(filepath.Join(noSnap, "users", memory.DefaultUserID, "pages.idx")); err != nil {
		t.Fatal(err)
	}
	want, _ := retrieve(noSnap)
	for name, data := range damaged {
		t.Run(name, func(t *testing.T) {
			dir := copyData("damaged")
			if err := os.WriteFile(filepath.Join(dir, "users", memory.DefaultUserID, "pages.idx"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, used := retrieve(dir)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("retrievals after a restart on a snapshot (%s) differ from those without one", name)
			}
			if wantUse := name == "as saved"; used != wantUse {
				t.Errorf("snapshot (%s) used = %v, want %v", name, used, wantUse)
			}
		})
	}
}
