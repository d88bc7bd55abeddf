package files_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// runeCounter counts four bytes as a token; the tests do not need tiktoken.
type runeCounter struct{}

func (runeCounter) Count(s string) int { return len(s)/4 + 1 }

func newTierService(t *testing.T, dir string) *engine.Service {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 3
	clock := func() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC) }
	s, err := engine.NewService(cfg, store, runeCounter{}, engine.WithClock(clock), engine.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// placements maps each turn id to the session holding it.
func placements(t *testing.T, s *engine.Service) map[string]string {
	t.Helper()
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ses := range view.Sessions {
		for _, p := range ses.Pages {
			if _, dup := out[p.ID]; dup {
				t.Errorf("page %s is in two sessions", p.ID)
			}
			out[p.ID] = ses.ID
		}
	}
	return out
}

func TestMidTermPersistsAndRebuilds(t *testing.T) {
	dir := t.TempDir()
	s := newTierService(t, dir)
	topics := []string{"kyoto trip cherry blossom temple", "postgres vacuum replica planner", "sourdough starter hydration crust"}
	for i := range 30 {
		if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: fmt.Sprintf("%s %d", topics[i/10], i), AgentResponse: topics[i/10]}); err != nil {
			t.Fatal(err)
		}
	}
	want := placements(t, s)
	if len(want) != 27 {
		t.Fatalf("%d pages in mid-term, want 27 (30 minus a window of 3)", len(want))
	}
	s.Close(context.Background())

	matches, _ := filepath.Glob(filepath.Join(dir, "*", "*", "midterm.json"))
	matches2, _ := filepath.Glob(filepath.Join(dir, "*", "midterm.json"))
	paths := slices.Concat(matches, matches2)
	if len(paths) != 1 {
		t.Fatalf("midterm.json files = %v, want one", paths)
	}
	if fi, err := os.Stat(paths[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("midterm.json mode = %v, %v; want 0600", fi.Mode(), err)
	}

	tests := []struct {
		name   string
		damage func(path string)
	}{
		{"reloaded", func(string) {}},
		{"missing", func(p string) { os.Remove(p) }},
		{"corrupt", func(p string) { os.WriteFile(p, []byte(`{"version":1,"sessions":[{`), 0o600) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.damage(paths[0])
			s := newTierService(t, dir)
			defer s.Close(context.Background())
			got := placements(t, s)
			if len(got) != len(want) {
				t.Fatalf("%d pages after restart, want %d", len(got), len(want))
			}
			for id, ses := range want {
				if got[id] != ses {
					t.Errorf("page %s in %q after restart, was in %q", id, got[id], ses)
				}
			}
		})
	}
}

func TestForgottenPagesLeaveMidTerm(t *testing.T) {
	dir := t.TempDir()
	s := newTierService(t, dir)
	var ids []string
	for i := range 12 {
		user := fmt.Sprintf("kyoto trip cherry blossom temple %d", i)
		if i == 4 {
			user = "zanzibar kyoto trip cherry blossom temple secret"
		}
		res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: user, AgentResponse: "kyoto temple"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.TurnIDs...)
	}
	if got := placements(t, s); got[ids[4]] == "" || len(got) != 9 {
		t.Fatalf("placements = %v, want 9 pages including exchange 4", got)
	}
	if _, err := s.Forget(t.Context(), memory.ForgetRequest{TurnIDs: []string{ids[4]}}); err != nil {
		t.Fatal(err)
	}
	got := placements(t, s)
	if _, ok := got[ids[4]]; ok || len(got) != 8 {
		t.Errorf("after forgetting exchange 4: placements = %v, want the other 8", got)
	}
	s.Close(context.Background())
	data, err := os.ReadFile(filepath.Join(dir, "users", memory.DefaultUserID, "midterm.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "zanzibar") {
		t.Errorf("midterm.json still quotes the forgotten exchange: %s", data)
	}
}

func TestOpenRemovesStaleMidTermTemp(t *testing.T) {
	dir := t.TempDir()
	s := newTierService(t, dir)
	if _, err := s.Add(t.Context(), memory.AddRequest{UserInput: "hello there", AgentResponse: "hi"}); err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())
	scopeDir := filepath.Join(dir, "users", memory.DefaultUserID)
	stale := filepath.Join(scopeDir, ".midterm.json.crashed.tmp")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale mid-term temp file left after Open: %v", err)
	}
}
