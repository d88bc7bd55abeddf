package recall

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestInjectionLeavesOutEchoingReplies checks the second page of a host's
// history asked about in the first person: an assistant reply that only
// repeats the words its user side matches is left out, one that adds a
// matched word is quoted, and every reply is quoted when the query asks
// what the assistant said or when the page is a dialogue of named people.
func TestInjectionLeavesOutEchoingReplies(t *testing.T) {
	day := time.Date(2024, 5, 7, 10, 0, 0, 0, time.UTC)
	first := memory.PageHit{ID: "p1", ThreadID: "default", Time: day,
		User: "My car gets 30 miles per gallon in the city, can you help with fuel use?", Reply: "Sure, check the tyres first."}
	second := func(user, reply string) memory.PageHit {
		return memory.PageHit{ID: "p2", ThreadID: "default", Time: day.Add(time.Hour), User: user, Reply: reply}
	}
	tests := []struct {
		name      string
		query     string
		page      memory.PageHit
		wantReply bool
	}{
		{"echo of the user's words left out", "How many miles per gallon does my car get?",
			second("Can you help? My car was getting 28 miles per gallon lately.", "Getting back to 30 miles per gallon is doable with a tune-up."), false},
		{"a reply adding a matched word quoted", "How many miles per gallon does my car get in the city?",
			second("Can you help? My car was getting 28 miles per gallon lately.", "In the city, 28 miles per gallon is below what it should do."), true},
		{"asked what the assistant said", "What did you say about miles per gallon?",
			second("Can you help? My car was getting 28 miles per gallon lately.", "Getting back to 30 miles per gallon is doable with a tune-up."), true},
		{"a dialogue of named people", "How many miles per gallon does my car get?",
			second("Tim: My car was getting 28 miles per gallon lately?", "John: Getting back to 30 miles per gallon is doable."), true},
	}
	count := newCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := InjectionInput{Budget: 2000, Pages: []memory.PageHit{first, tt.page}, Query: QueryTerms(tt.query), AsksUser: AsksUser(tt.query)}
			text, _ := BuildInjection(count, in)
			if !strings.Contains(text, "28 miles per gallon lately") {
				t.Fatalf("BuildInjection() lacks the user's side:\n%s", text)
			}
			_, reply, _ := strings.Cut(tt.page.Reply, ": ")
			if !strings.Contains(tt.page.Reply, ": ") {
				reply = tt.page.Reply
			}
			if got := strings.Contains(text, reply); got != tt.wantReply {
				t.Errorf("reply quoted = %v, want %v:\n%s", got, tt.wantReply, text)
			}
		})
	}
}
