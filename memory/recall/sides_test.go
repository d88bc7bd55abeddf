package recall

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestInjectionQuotesTheLikelySides checks which sides of each page reach
// the text: the best page whole; after it the side of the speaker the
// question names, or, when it names none, the sides holding a query word
// (a category member counts) and the answer to a matched question, a page
// holding none quoted whole; a correction always whole.
func TestInjectionQuotesTheLikelySides(t *testing.T) {
	day := time.Date(2024, 5, 7, 10, 0, 0, 0, time.UTC)
	page := func(id, user, reply string) memory.PageHit {
		return memory.PageHit{ID: id, ThreadID: "default", Time: day, User: user, Reply: reply}
	}
	tests := []struct {
		name    string
		query   string
		match   string // the words a side is matched on, when not the query's
		pages   []memory.PageHit
		notes   []ItemNote
		want    []string
		notWant []string
	}{
		{
			name:  "named speaker",
			query: "Where has Melanie camped?",
			pages: []memory.PageHit{
				page("p1", "Melanie: We went camping at the beach last month.", "Caroline: That sounds lovely, I love the sea."),
				page("p2", "Caroline: Did you go anywhere else?", "Melanie: The mountains, and the kids loved the forest."),
				page("p3", "Caroline: I went camping once, it rained all week.", "Caroline: Never again, honestly."),
			},
			want:    []string{`Caroline: "That sounds lovely`, `Melanie: "The mountains, and the kids loved the forest."`},
			notWant: []string{"Did you go anywhere else", "it rained all week"},
		},
		{
			name:  "both speakers named",
			query: "What did Melanie tell Caroline about the forest?",
			pages: []memory.PageHit{
				page("p1", "Melanie: We went camping at the beach.", "Caroline: Lovely."),
				page("p2", "Caroline: Did you go anywhere else?", "Melanie: The mountains and the forest."),
			},
			want: []string{"Did you go anywhere else", "The mountains and the forest."},
		},
		{
			name:  "no speaker named",
			query: "Which sports do I play?",
			match: "sport basketball",
			pages: []memory.PageHit{
				page("p1", "I joined a tennis club.", "Great, how often do you go?"),
				page("p2", "I played basketball with my brother on Sunday.", "Who won the game in the end?"),
				page("p3", "My brother moved to Leeds.", "Is he closer to you now?"),
			},
			want:    []string{"how often do you go", "I played basketball", "My brother moved to Leeds.", "Is he closer to you now?"},
			notWant: []string{"Who won the game"},
		},
		{
			name:  "a matched question with its answer",
			query: "What is my dog called?",
			pages: []memory.PageHit{
				page("p1", "We adopted a greyhound puppy.", "Congratulations!"),
				page("p2", "What should I call my new dog?", "How about Pixel?"),
				page("p3", "The dog sleeps all day.", "Greyhounds are sprinters, they rest a lot."),
			},
			want:    []string{"What should I call my new dog?", "How about Pixel?", "The dog sleeps all day."},
			notWant: []string{"Greyhounds are sprinters"},
		},
		{
			name:  "a correction is quoted whole",
			query: "Where has Melanie camped?",
			pages: []memory.PageHit{
				page("p1", "Melanie: We went camping at the beach.", "Caroline: Lovely."),
				page("p2", "Caroline: You camped in the desert, right?", "Melanie: No, in the forest."),
			},
			notes: []ItemNote{{Seq: 0}, {Seq: 1, Correction: true}},
			want:  []string{"You camped in the desert, right?", "No, in the forest."},
		},
	}
	count := newCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := InjectionInput{Budget: 2000, Pages: tt.pages, PageNotes: tt.notes, Query: QueryTerms(tt.query)}
			if tt.match != "" {
				in.Match = QueryTerms(tt.match)
			}
			text, _ := BuildInjection(count, in)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("injection lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("injection holds %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestNamedSpeakers(t *testing.T) {
	names := map[string]bool{"Melanie": true, "Caroline": true, "Jo Ann": true, "Fahim Khan": true}
	tests := []struct {
		query string
		want  []string
	}{
		{"Where has Melanie camped?", []string{"Melanie"}},
		{"What did Melanie's kids like?", []string{"Melanie"}},
		{"What did Caroline and Melanie bake?", []string{"Caroline", "Melanie"}},
		{"Where does Jo Ann live?", []string{"Jo Ann"}},
		{"Where does Ann live?", nil},
		{"What are Fahim's hobbies?", []string{"Fahim Khan"}},
		{"What games does Fahim Khan play?", []string{"Fahim Khan"}},
		{"What did Khan buy?", nil},
		{"Where did we go camping?", nil},
	}
	for _, tt := range tests {
		got := namedSpeakers(names, QueryTerms(tt.query))
		if len(got) != len(tt.want) {
			t.Errorf("namedSpeakers(%q) = %v, want %v", tt.query, got, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !got[w] {
				t.Errorf("namedSpeakers(%q) = %v, want %v", tt.query, got, tt.want)
			}
		}
	}
}
