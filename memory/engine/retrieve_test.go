package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// TestConversationWithoutThreadID checks that, with no thread id, only the
// exchanges within conversation_idle_gap of each other and of now count as
// this conversation, while a named thread is the thread.
func TestConversationWithoutThreadID(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { return now }))
	add := func(thread, user string, at time.Time) {
		t.Helper()
		if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: user, AgentResponse: "ok", Timestamp: at.Format(time.RFC3339)}); err != nil {
			t.Fatal(err)
		}
	}
	add("", "January question about invoices", time.Date(2025, 1, 10, 9, 0, 0, 0, time.UTC))
	add("", "earlier today about sourdough starter", now.Add(-3*time.Hour))
	add("", "sourdough hydration", now.Add(-20*time.Minute))
	add("", "sourdough baking time", now.Add(-5*time.Minute))
	add("work", "work thread from last year", time.Date(2024, 11, 3, 9, 0, 0, 0, time.UTC))

	tests := []struct {
		thread string
		want   []string
	}{
		{"", []string{"sourdough hydration", "sourdough baking time"}},
		{"work", []string{"work thread from last year"}},
	}
	for _, tt := range tests {
		res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: tt.thread, Query: "bread"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Recent {
			got = append(got, r.User)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Retrieve(thread %q).Recent = %q, want %q", tt.thread, got, tt.want)
		}
		if strings.Contains(res.Injection, "invoices") {
			t.Errorf("Retrieve(thread %q) injected the January exchange:\n%s", tt.thread, res.Injection)
		}
	}

	// An hour later the conversation is over: nothing is "this conversation".
	now = now.Add(time.Hour)
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "bread"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recent) != 0 || strings.Contains(res.Injection, recall.SectionHeadings[recall.SecRecent]) {
		t.Errorf("Retrieve() after an idle hour: Recent = %v, injection:\n%s", res.Recent, res.Injection)
	}
}

// TestRelevanceFloor checks that a question about something never
// discussed injects no past exchange while the pages list keeps its
// ranking, and that a weak page next to a strong one is not injected.
func TestRelevanceFloor(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { return now }))
	old := now.AddDate(0, -1, 0)
	for _, ex := range [][2]string{
		{"Our billing service runs on Heroku and the invoices job is slow", "Move the invoices job to a worker queue."},
		{"Which Postgres version for the analytics warehouse?", "PostgreSQL 16, partitioned by month."},
		{"Good morning", "Good morning! What are we working on?"},
		{"The deploy pipeline takes twenty minutes", "Cache the Go build and module downloads."},
	} {
		if _, err := s.Add(t.Context(), memory.AddRequest{UserInput: ex[0], AgentResponse: ex[1], Timestamp: old.Format(time.RFC3339)}); err != nil {
			t.Fatal(err)
		}
		old = old.Add(2 * time.Hour)
	}
	tests := []struct {
		query string
		want  []string // phrases injected; nil: no exchange
		not   []string
	}{
		{"What's a good sourdough bread recipe?", nil, []string{"Good morning"}},
		{"How do I speed up the deploy pipeline?", []string{"deploy pipeline"}, []string{"Good morning", "invoices"}},
		{"which postgres version in the warehouse", []string{"PostgreSQL 16"}, []string{"Heroku"}},
	}
	for _, tt := range tests {
		res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == nil && strings.Contains(res.Injection, "] User: ") {
			t.Errorf("Retrieve(%q) injected a past exchange:\n%s", tt.query, res.Injection)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Injection, w) {
				t.Errorf("Retrieve(%q) injection lacks %q:\n%s", tt.query, w, res.Injection)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(res.Injection, n) {
				t.Errorf("Retrieve(%q) injection holds %q:\n%s", tt.query, n, res.Injection)
			}
		}
	}
	res, _ := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "What's a good sourdough bread recipe?"})
	if len(res.Pages) == 0 {
		t.Errorf("Retrieve() pages = none, want the ranked list kept below the floor")
	}
}

// TestTextDrawsOnDefaultPages checks that a retrieval asking for more
// pages than retrieval_queue_capacity lists them all but quotes in the
// text only pages among the first retrieval_queue_capacity.
func TestTextDrawsOnDefaultPages(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := configWith(func(c *memory.Config) { c.RetrievalQueueCapacity = 3 })
	s := newTestService(t, newMemStore(), cfg, WithClock(func() time.Time { return now }))
	at := now.AddDate(0, -1, 0)
	for i := range 8 {
		req := memory.AddRequest{ThreadID: fmt.Sprintf("t%d", i), UserInput: fmt.Sprintf("My sourdough starter note number %d", i),
			AgentResponse: "Keep it warm.", Timestamp: at.Format(time.RFC3339)}
		if _, err := s.Add(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		at = at.Add(24 * time.Hour)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "sourdough starter note", MaxResults: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 8 {
		t.Fatalf("Retrieve() pages = %d, want 8", len(res.Pages))
	}
	quoted := strings.Count(res.Injection, "sourdough starter note number")
	if quoted == 0 || quoted > 3 {
		t.Errorf("Retrieve() text quotes %d pages, want 1 to 3:\n%s", quoted, res.Injection)
	}
	for _, p := range res.Pages[3:] {
		if strings.Contains(res.Injection, p.User) {
			t.Errorf("Retrieve() text quotes %q, ranked past the first 3", p.User)
		}
	}
}
