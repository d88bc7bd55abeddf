package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestPageIndexSnapshotOnDisk checks the files store's side of page index
// snapshots through the service: written at close as users/<u>/pages.idx
// with mode 0600, used by the next start, and a damaged file is only a
// cache miss (the next start indexes the log and answers the same).
func TestPageIndexSnapshotOnDisk(t *testing.T) {
	dir := t.TempDir()
	s := newTierService(t, dir)
	for i := range 600 {
		if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: fmt.Sprintf("question %d about the greenhouse tomatoes", i), AgentResponse: "answer"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close(context.Background())
	path := filepath.Join(dir, "users", "default", "pages.idx")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no snapshot after close: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("snapshot mode %v, want 0600", info.Mode().Perm())
	}
	retrieve := func() []string {
		s := newTierService(t, dir)
		defer s.Close(context.Background())
		res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "question 17 greenhouse", MaxResults: 5})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range res.Pages {
			ids = append(ids, p.ID)
		}
		return ids
	}
	want := retrieve()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := retrieve(); fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
		t.Errorf("with a damaged snapshot pages = %v, want %v", got, want)
	}
}
