package engine

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestKeywordsReachProfile: a profile sentence the question's words miss
// enters with the host's keywords; a standing constraint enters whatever
// is asked; the others stay out.
func TestKeywordsReachProfile(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	if _, err := s.UpdateProfile(t.Context(), memory.UpdateProfileRequest{Section: "personal_context",
		Text: "Loves Thai green curry and spicy noodles. Is allergic to shellfish. Supports Feyenoord. Lives in Rotterdam."}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(t.Context(), memory.AddRequest{UserInput: "The build job keeps timing out.", AgentResponse: "Check the cache."}); err != nil {
		t.Fatal(err)
	}
	query := "What should I cook tonight?"
	plain, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: query})
	if err != nil {
		t.Fatal(err)
	}
	kw, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: query, Keywords: []string{"curry", "noodles", "recipe", "dinner"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text      string
		injection string
		want      bool
	}{
		{"Is allergic to shellfish.", plain.Injection, true},
		{"Loves Thai green curry", plain.Injection, false},
		{"Loves Thai green curry", kw.Injection, true},
		{"Is allergic to shellfish.", kw.Injection, true},
		{"Supports Feyenoord", kw.Injection, false},
	} {
		if got := strings.Contains(tt.injection, tt.text); got != tt.want {
			t.Errorf("injection holds %q = %v, want %v:\n%s", tt.text, got, tt.want, tt.injection)
		}
	}
}
