package recall

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// longAnswer is a long assistant reply (longer than excerptRunes, shorter
// than the cut of a side at MaxPageRunes/2), one sentence of which
// speaks of Lisbon.
var longAnswer = strings.Join([]string{
	"Great question, there is a lot to consider when you plan a trip like this one.",
	"First, think about the season, since prices and crowds change a great deal from month to month.",
	"Second, book the flights early, because fares tend to rise in the final weeks before departure.",
	"In Lisbon, the tram 28 passes the old quarter and the castle, and a day ticket covers it.",
	"Third, keep a copy of your documents somewhere safe, in case a bag goes missing on the way.",
	"I hope this helps, and let me know if you want a day-by-day itinerary for the whole week!",
}, " ")

// TestInjectionCutsLongReplies checks how the words of a page are quoted:
// a long assistant reply is cut to the sentences holding the query's or
// the keywords' words, in order, each gap marked "…"; a reply that holds
// none keeps its opening; a short reply, the user's side whatever its
// length, and a named person's long turn are quoted whole.
func TestInjectionCutsLongReplies(t *testing.T) {
	day := time.Date(2024, 5, 7, 10, 0, 0, 0, time.UTC)
	page := func(user, reply string) memory.PageHit {
		return memory.PageHit{ID: "p1", ThreadID: "default", Time: day, User: user, Reply: reply}
	}
	tests := []struct {
		name     string
		query    string
		keywords string
		page     memory.PageHit
		want     []string
		notWant  []string
	}{
		{
			name:    "long reply cut around the matching sentence",
			query:   "Which tram runs to the castle?",
			page:    page("I am going to Portugal in May, any tips for the trip?", longAnswer),
			want:    []string{`Assistant: "… In Lisbon, the tram 28 passes the old quarter and the castle, and a day ticket covers it. …"`},
			notWant: []string{"Great question", "book the flights", "itinerary"},
		},
		{
			name:     "long reply cut around the keywords' words",
			query:    "What did you tell me about my papers?",
			keywords: "documents passport",
			page:     page("I am going to Portugal in May, any tips for the trip?", longAnswer),
			want:     []string{"… Third, keep a copy of your documents somewhere safe, in case a bag goes missing on the way. …"},
			notWant:  []string{"tram 28"},
		},
		{
			name:    "long reply holding no word keeps its opening",
			query:   "What did I ask about kangaroos?",
			page:    page("Any tips for the trip?", longAnswer),
			want:    []string{`Assistant: "Great question, there is a lot to consider when you plan a trip like this one. …"`},
			notWant: []string{"tram 28", "the season", "itinerary"},
		},
		{
			name:  "short reply whole",
			query: "Which tram runs to the castle?",
			page:  page("Which tram goes up to the castle?", "The 28, it passes the old quarter. Take it early, before the crowds."),
			want:  []string{`Assistant: "The 28, it passes the old quarter. Take it early, before the crowds."`},
		},
		{
			name:  "the user's side is never cut",
			query: "Which tram runs to the castle?",
			page:  page(longAnswer, "The 28."),
			want:  []string{`User: "` + longAnswer + `"`},
		},
		{
			name:  "a named person's long turn is not cut, the other side unnamed",
			query: "Which tram runs to the castle?",
			page:  page("What should I see in Portugal?", "John: "+longAnswer),
			want:  []string{`"John: ` + longAnswer + `"`},
		},
		{
			name:  "a named person's long turn is not cut",
			query: "Which tram runs to the castle?",
			page:  page("Tim: What should I see in Portugal?", "John: "+longAnswer),
			want:  []string{`John: "` + longAnswer + `"`},
		},
	}
	count := newCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := InjectionInput{Budget: 2000, Pages: []memory.PageHit{tt.page}, Query: QueryTerms(tt.query)}
			if tt.keywords != "" {
				in.Keywords = KeywordTerms([]string{tt.keywords})
			}
			text, _ := BuildInjection(count, in)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("BuildInjection() lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("BuildInjection() holds %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestExcerpt checks the cut itself: the sentences holding the most
// words first, as many as fit, in their order, one mark per gap; a
// text within the limit or of one sentence whole; whether the text holds
// a word of match.
func TestExcerpt(t *testing.T) {
	text := "Alpha one here. Beta two here. Gamma tram castle. Delta tram. Epsilon end."
	tests := []struct {
		name      string
		set       string
		match     string
		max       int
		want      string
		wantHolds bool
	}{
		{"best sentence only", "tram castle", "castle", 20, "… Gamma tram castle. …", true},
		{"two matches, gap marked once", "tram castle", "zebra", 40, "… Gamma tram castle. Delta tram. …", false},
		{"match at the start and end", "alpha epsilon", "", 40, "Alpha one here. … Epsilon end.", false},
		{"within the limit", "tram", "tram", 200, text, true},
		{"no match keeps the opening", "zebra", "", 32, "Alpha one here. Beta two here. …", false},
		{"one sentence whole", "tram", "", 5, "A single long sentence with tram", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := text
			if tt.name == "one sentence whole" {
				in = "A single long sentence with tram"
			}
			got, holds := excerpt(in, newTermSet(QueryTerms(tt.set), nil), newTermSet(QueryTerms(tt.match), nil), tt.max)
			if got != tt.want || holds != tt.wantHolds {
				t.Errorf("excerpt(%q, %q, %d) = %q, %v, want %q, %v", in, tt.set, tt.max, got, holds, tt.want, tt.wantHolds)
			}
		})
	}
}
