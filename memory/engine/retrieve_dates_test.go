package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestDatedQuestionInjectsItsDay checks, through Retrieve, that a question
// naming a day injects the exchange of that day that answers it: the date's
// words ("march", "2023") are in no exchange, and must not keep it below
// the relevance floor. A question about something never said still
// injects nothing.
func TestDatedQuestionInjectsItsDay(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { return time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC) }))
	for _, ex := range []struct{ when, user, reply string }{
		{"2023-03-10T18:00:00Z", "Tim: I went to a charity run with my colleagues from the office.", "John: That's a great cause!"},
		{"2023-05-02T18:00:00Z", "Tim: I baked sourdough bread this weekend.", "John: Yum, send a picture."},
		{"2023-06-20T18:00:00Z", "Tim: My sister visited us from Boston.", "John: How long is she staying?"},
	} {
		if _, err := s.Add(t.Context(), memory.AddRequest{Timestamp: ex.when, UserInput: ex.user, AgentResponse: ex.reply}); err != nil {
			t.Fatalf("Add() = %v", err)
		}
	}
	tests := []struct {
		query string
		want  string // "" when nothing may be injected
	}{
		{"What did Tim attend with his colleagues in March 2023?", "charity run"},
		{"What did Tim do with his colleagues on 10 March, 2023?", "charity run"},
		{"Which vaccine did Tim get in March 2023?", ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: tt.query})
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			shown := strings.Contains(res.Injection, "## Relevant past exchanges")
			switch {
			case tt.want == "" && shown:
				t.Errorf("injection =\n%s\nwant no past exchange", res.Injection)
			case tt.want != "" && !strings.Contains(res.Injection, tt.want):
				t.Errorf("injection =\n%s\nwant the exchange holding %q", res.Injection, tt.want)
			}
		})
	}
}
