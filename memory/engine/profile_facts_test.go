package engine

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite the golden files in testdata")

// TestProfileBuiltFromFacts holds get_user_profile's injection without an
// extraction model against a golden: sections built from the facts the
// host's model passed, by category, newest first, no fact listed twice.
func TestProfileBuiltFromFacts(t *testing.T) {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { now = now.Add(time.Minute); return now }), WithFactIDs(func() string { n++; return fmt.Sprintf("fact_%08x", n) }))
	exchanges := []struct {
		user  string
		facts []memory.HostFact
	}{
		{"I sail a Contessa 32 called Marlin out of Cascais.", []memory.HostFact{
			{Content: "Sails a Contessa 32 called Marlin", Category: memory.CategoryContext},
			{Content: "Moors in Cascais", Category: memory.CategoryContext}}},
		{"Please use metric units, and keep answers short.", []memory.HostFact{
			{Content: "Prefers metric units", Category: memory.CategoryPreference},
			{Content: "Likes short answers", Category: memory.CategoryPreference}}},
		{"No, at sea I use nautical miles.", []memory.HostFact{
			{Content: "Uses nautical miles at sea", Category: memory.CategoryCorrection, SourceError: "Gave distances at sea in kilometres"}}},
		{"I want to sail to the Azores next summer.", []memory.HostFact{
			{Content: "Plans to sail to the Azores next summer", Category: memory.CategoryGoal}}},
	}
	for _, e := range exchanges {
		res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "sail", UserInput: e.user, AgentResponse: "Noted.", Facts: e.facts})
		if err != nil {
			t.Fatalf("Add() = %v", err)
		}
		for _, f := range res.Facts {
			if f.Status != memory.HostFactKept {
				t.Fatalf("Add() facts = %+v, want all kept", res.Facts)
			}
		}
	}
	prof, err := s.Profile(t.Context(), memory.ProfileRequest{})
	if err != nil {
		t.Fatalf("Profile() = %v", err)
	}
	if len(prof.BuiltFromFacts) != 4 || prof.Empty {
		t.Errorf("built_from_facts = %+v, want 4 sections", prof.BuiltFromFacts)
	}
	if c := strings.Count(prof.Injection, "Moors in Cascais"); c != 1 {
		t.Errorf("injection holds a fact %d times, want once:\n%s", c, prof.Injection)
	}
	got := prof.Injection + "\n"
	path := filepath.Join("testdata", "profile_from_facts.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./memory -run TestProfileBuiltFromFacts -update-golden): %v", err)
	}
	if got != string(want) {
		t.Errorf("profile injection differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
