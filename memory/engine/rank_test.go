package engine

import (
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestRankPagesNeighbours(t *testing.T) {
	type turn struct{ thread, at, user, reply string }
	tests := []struct {
		name  string
		turns []turn
		query string
		want  []string // users of the pages returned, in order
	}{
		{
			name: "next exchange of the session comes along",
			turns: []turn{
				{"t", "2024-05-01 10:00:00", "Let me tell you about my garden", "Sure, go ahead"},
				{"t", "2024-05-01 10:01:00", "I planted tomatoes and basil", "Lovely"},
				{"t", "2024-05-01 18:00:00", "The weather is grey", "Bring an umbrella"},
			},
			query: "garden",
			want:  []string{"Let me tell you about my garden", "I planted tomatoes and basil"},
		},
		{
			name: "a later session is not a neighbour",
			turns: []turn{
				{"t", "2024-05-01 10:00:00", "Let me tell you about my garden", "Sure, go ahead"},
				{"t", "2024-05-03 10:00:00", "I planted tomatoes and basil", "Lovely"},
			},
			query: "garden",
			want:  []string{"Let me tell you about my garden"},
		},
		{
			name: "another thread is not a neighbour",
			turns: []turn{
				{"a", "2024-05-01 10:00:00", "Let me tell you about my garden", "Sure, go ahead"},
				{"b", "2024-05-01 10:01:00", "I planted tomatoes and basil", "Lovely"},
			},
			query: "garden",
			want:  []string{"Let me tell you about my garden"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestService(t, newMemStore(), memory.DefaultConfig())
			for _, tr := range tc.turns {
				if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: tr.thread, UserInput: tr.user, AgentResponse: tr.reply, Timestamp: tr.at}); err != nil {
					t.Fatalf("Add() = %v", err)
				}
			}
			res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: tc.query, MaxResults: 10})
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			var got []string
			for _, p := range res.Pages {
				got = append(got, p.User)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Retrieve(%q) pages = %q, want %q", tc.query, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("Retrieve(%q) pages = %q, want %q", tc.query, got, tc.want)
					break
				}
			}
		})
	}
}

func TestFeedbackExpandsQuery(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	for _, tr := range [][2]string{
		{"My sister Ana plays the cello", "Nice"},
		{"Ana plays cello in an orchestra", "Impressive"},
		{"The orchestra tours Vienna in June", "Exciting"},
		{"Unrelated note about groceries", "Ok"},
	} {
		addPair(t, s, "t"+tr[0][:2], tr[0], tr[1])
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "What does Ana play?", MaxResults: 10})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	found := false
	for _, p := range res.Pages {
		if p.User == "Unrelated note about groceries" {
			t.Errorf("pages = %+v, want no unrelated page", res.Pages)
		}
		found = found || p.User == "The orchestra tours Vienna in June"
	}
	if !found {
		t.Errorf("pages = %+v, want the orchestra page found through feedback terms", res.Pages)
	}
}
