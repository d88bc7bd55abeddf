package recall

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestTrimPhatic(t *testing.T) {
	tests := []struct {
		name, query, text, want string
	}{
		{"only thanks", "", "Thanks!", ""},
		{"praise and sign-off", "", "Wow, that's awesome! Take care, talk soon!", ""},
		{"same here", "", "Same here!", ""},
		{"closing sign-off cut", "", "I adopted a greyhound named Pixel. Take care and talk soon!", "I adopted a greyhound named Pixel. …"},
		{"opening thanks kept", "", "Thanks! I've been writing about fantasy novels.", "Thanks! I've been writing about fantasy novels."},
		{"an answer is not small talk", "", "Yes!", "Yes!"},
		{"me too is an answer", "", "Me too!", "Me too!"},
		{"a number is kept", "", "Great, see you at 5!", "Great, see you at 5!"},
		{"a name is kept", "", "Thanks, John!", "Thanks, John!"},
		{"a query word is kept", "what was awesome", "That's awesome!", "That's awesome!"},
		{"content is kept", "", "Have fun with your writing!", "Have fun with your writing!"},
		{"how it went is kept", "", "I joined a support group. It was great!", "I joined a support group. It was great!"},
		{"empty", "", "", ""},
		{"line breaks", "", "My flight is on Friday.\nBye!", "My flight is on Friday. …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trimPhatic(tt.text, QueryTerms(tt.query)); got != tt.want {
				t.Errorf("trimPhatic(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestPageLineSpeakers checks the quoting of a page: after the speakers'
// names when both sides begin with two different names, after the role
// otherwise; a side of small talk left out; a page of only small talk
// not shown.
func TestPageLineSpeakers(t *testing.T) {
	day := time.Date(2024, 5, 7, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		pages       []memory.PageHit
		want, never []string
	}{
		{
			name:  "dialogue of two named people",
			pages: []memory.PageHit{{ID: "a", Time: day, User: "Tim: I write about fantasy novels.", Reply: "John: Which ones?"}},
			want:  []string{`- Tim: "I write about fantasy novels." John: "Which ones?"`},
		},
		{
			name:  "a colon that is not a dialogue keeps the roles",
			pages: []memory.PageHit{{ID: "a", Time: day, User: "Update: the deploy moved to Friday", Reply: "Noted, Friday it is."}},
			want:  []string{`- User: "Update: the deploy moved to Friday" Assistant: "Noted, Friday it is."`},
		},
		{
			name: "small talk side left out, small talk page not shown",
			pages: []memory.PageHit{
				{ID: "a", Time: day, User: "Tim: Thanks!", Reply: "John: I got hiking gear for the trip."},
				{ID: "b", Time: day, User: "Tim: Same here!", Reply: "John: Take care, talk soon!"},
			},
			want:  []string{`- John: "I got hiking gear for the trip."`},
			never: []string{"Same here", "Thanks!"},
		},
	}
	count := newCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _ := BuildInjection(count, InjectionInput{Pages: tt.pages, Budget: 2000})
			for _, w := range tt.want {
				if !strings.Contains(text, w+"\n") {
					t.Errorf("injection lacks line %q:\n%s", w, text)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(text, n) {
					t.Errorf("injection holds %q:\n%s", n, text)
				}
			}
		})
	}
}

// FuzzTrimPhatic checks that cutting small talk never alters the words
// kept: the result is empty, the text itself, or a prefix of it followed
// by an ellipsis.
func FuzzTrimPhatic(f *testing.F) {
	for _, s := range []string{"Thanks!", "I moved. Bye!", "a.\nb!", "Wow… great! See ya", "!!", " . ", "日本へ行った。ありがとう！"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := trimPhatic(text, nil)
		if got == "" || got == text {
			return
		}
		kept, ok := strings.CutSuffix(got, " …")
		if !ok || !strings.HasPrefix(strings.TrimSpace(text), kept) {
			t.Errorf("trimPhatic(%q) = %q: not a prefix of the text with an ellipsis", text, got)
		}
	})
}
