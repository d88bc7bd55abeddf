package recall

import (
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// TestKeywordPageSurvivesCoverage: a page that holds the host's keyword
// but none of the question's words is not zeroed by coverage, focus or the
// floor, and a stray question word ("start") does not put its page first.
func TestKeywordPageSurvivesCoverage(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Our CI pipeline fails on every push.", "Start with the build job: its cache key is wrong."}},
		[][2]string{{"I booked flights to Tokyo for 14 March, two weeks with my sister.", "Lovely: two weeks in Tokyo."}},
		[][2]string{{"Can you suggest a running route near the river?", "The river loop is 8 km and flat."}},
		[][2]string{{"When should I feed the sourdough starter?", "Two days before baking."}},
	)
	query := "When does my Japan holiday start?"
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	kw := []string{"Tokyo"}
	hits := Refine(st, query, KeywordTerms(kw), now, RankPages(st, query, kw, nil, 0, RankPool), 4)
	if len(hits) == 0 || hits[0].ID != 1 || hits[0].Score <= 0 {
		t.Fatalf("hits = %v, want the Tokyo page (1) first with a score", hits)
	}
	if floor := RelevantByKeywords(st, KeywordTerms(kw), hits); !floor[0] {
		t.Errorf("RelevantByKeywords(Tokyo)[0] = false, want the Tokyo page shown")
	}
}

// TestRelevantByKeywordsIgnoresUnseenGuesses: keywords no page holds do
// not raise the share the held ones must reach; when none is held nothing
// clears the floor.
func TestRelevantByKeywordsIgnoresUnseenGuesses(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"I'm vegetarian, so no fish either.", "Got it."}},
		[][2]string{{"Peanuts make me break out, I'm allergic.", "Noted."}},
		[][2]string{{"The build job on CI keeps timing out.", "Check the cache."}},
		[][2]string{{"Which cello strings last longest?", "Steel-core ones."}},
	)
	kterms := KeywordTerms([]string{"food", "vegetarian", "allergic", "peanuts", "spicy", "recipe", "cuisine"})
	hits := []lexical.Hit{{ID: 1, Score: 3.6}, {ID: 0, Score: 2.3}, {ID: 2, Score: 0.1}}
	got := RelevantByKeywords(st, kterms, hits)
	if !got[0] || !got[1] || got[2] {
		t.Errorf("RelevantByKeywords = %v, want the peanut and vegetarian pages shown, the CI page not", got)
	}
	if got := RelevantByKeywords(st, KeywordTerms([]string{"sushi", "ramen"}), hits); slices.Contains(got, true) {
		t.Errorf("RelevantByKeywords(unseen words) = %v, want nothing shown", got)
	}
}

func TestStandingText(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Is allergic to peanuts", true},
		{"Has a severe allergy to shellfish", true},
		{"Is vegetarian and eats no fish", true},
		{"Follows a gluten-free diet because of coeliac disease", true},
		{"Uses a wheelchair", true},
		{"Has type 1 diabetes and carries insulin", true},
		{"Likes spicy food", false},
		{"Prefers Go for backend services", false},
		{"Works as a data engineer in Rotterdam", false},
	}
	for _, tt := range tests {
		if got := StandingText(tt.text); got != tt.want {
			t.Errorf("StandingText(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestKeywordsHeld(t *testing.T) {
	k := NewKeywords([]string{"food", "Spicy dishes", "remember", "peanuts"})
	if got := k.InText("Likes spicy food"); !slices.Equal(got, []string{"food", "Spicy dishes"}) {
		t.Errorf("InText = %q, want [food, Spicy dishes]", got)
	}
	if got := k.InText("Plays the cello"); got != nil {
		t.Errorf("InText(unrelated) = %q, want nil", got)
	}
}

// TestKeywordsInPage: a page's matched keywords are those a word of
// which it holds, in the host's order, a word shared by two keywords
// counting for both, and the same as InText finds in the page's text.
func TestKeywordsInPage(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"We flew to Tokyo in May and ate sushi every day.", "That sounds wonderful."},
		{"Plays the cello on Sundays.", "Nice."},
	})
	k := NewKeywords([]string{"Tokyo trip", "sushi", "Kyoto", "tokyo", "what", "days"})
	tests := []struct {
		p    int
		want []string
	}{
		{0, []string{"Tokyo trip", "sushi", "tokyo", "days"}},
		{1, nil},
	}
	for _, tt := range tests {
		got := k.InPage(st, tt.p)
		if !slices.Equal(got, tt.want) {
			t.Errorf("InPage(%d) = %q, want %q", tt.p, got, tt.want)
		}
		tu := st.Turns[tt.p]
		if text := k.InText(tu.User + " " + tu.Reply); !slices.Equal(got, text) {
			t.Errorf("InPage(%d) = %q, InText of its text = %q: they differ", tt.p, got, text)
		}
	}
}
