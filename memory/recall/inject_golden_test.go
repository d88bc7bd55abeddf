package recall

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite the injection goldens in testdata/injection")

// TestInjectionGolden renders fixed inputs and compares the text with
// testdata/injection/<name>.golden (go test -run TestInjectionGolden
// -update-golden rewrites them): the format the host's model reads.
func TestInjectionGolden(t *testing.T) {
	day := time.Date(2024, 5, 7, 10, 0, 0, 0, time.UTC) // a Tuesday
	greyhound := []memory.PageHit{
		{ID: "a2", ThreadID: "default", Time: day, User: "The greyhound sleeps all day", Reply: "They do."},
		{ID: "b1", ThreadID: "default", Time: day.AddDate(0, 0, -20), User: "My flight to Lisbon is on Friday", Reply: "Noted."},
		{ID: "a1", ThreadID: "default", Time: day, User: "Which greyhound food is best?", Reply: "High protein kibble."},
		{ID: "a3", ThreadID: "default", Time: day.Add(3 * time.Hour), User: "He ate the kibble", Reply: "Good sign."},
	}
	tests := []struct {
		name string
		in   InjectionInput
	}{
		{
			// Groups by day, the best page's group first; time order
			// inside (then stored order); the time of day on the date
			// line when the group shares it.
			name: "pages_by_day",
			in: InjectionInput{
				Pages:     greyhound,
				PageNotes: []ItemNote{{Seq: 2}, {Seq: 1}, {Seq: 0}, {Seq: 3}},
			},
		},
		{
			// With the query's time: the day before it keeps the time
			// of day on its date line, the day twenty days earlier has
			// its date and weekday only; pages of one day said at
			// different times keep their times, whatever the day.
			name: "clock_recent_days",
			in: InjectionInput{
				Pages: []memory.PageHit{
					{ID: "a2", ThreadID: "default", Time: day, User: "The greyhound sleeps all day", Reply: "They do."},
					{ID: "b1", ThreadID: "default", Time: day.AddDate(0, 0, -20), User: "The greyhound came home today", Reply: "Welcome him!"},
					{ID: "b2", ThreadID: "default", Time: day.AddDate(0, 0, -21), User: "We pick up a greyhound tomorrow", Reply: "Exciting."},
					{ID: "b3", ThreadID: "default", Time: day.AddDate(0, 0, -21).Add(2 * time.Hour), User: "No, the greyhound comes on Friday", Reply: "Friday, then."},
				},
				Now: day.AddDate(0, 0, 1).Add(5 * time.Hour),
			},
		},
		{
			// Facts dated at their statement, the older one on the same
			// subject marked earlier; a correction fact and exchange;
			// both marks explained in the header; a model's topic.
			name: "facts_and_marks",
			in: InjectionInput{
				Facts: []memory.FactHit{
					{Fact: memory.Fact{Content: "The user lives in Munich", Category: memory.CategoryContext, CreatedAt: day.AddDate(0, 0, -1), ValidFrom: day.AddDate(-1, 0, 0)}},
					{Fact: memory.Fact{Content: "The user moved to Lisbon", Category: memory.CategoryContext, CreatedAt: day.AddDate(0, 0, -2), ValidFrom: day.AddDate(0, -1, 0)}},
					{Fact: memory.Fact{Content: "Call the dog Pixel, not Pixie", Category: memory.CategoryCorrection, CreatedAt: day, SourceError: "called the dog Pixie"}},
				},
				FactNotes: []ItemNote{{Topics: 1}, {Topics: 1}, {}},
				Pages: []memory.PageHit{
					{ID: "c1", ThreadID: "default", Time: day, User: "No, his name is Pixel", Reply: "Sorry, Pixel it is."},
				},
				PageNotes: []ItemNote{{Correction: true}},
				Sessions:  []memory.SessionHit{{ID: "session_1", Summary: "Naming the user's greyhound", Summarized: true, PageCount: 3, PageIDs: []string{"c1"}}},
			},
		},
		{
			// Pages of two threads: the thread is named on the date line;
			// an exchange of the current conversation shows once, in the
			// recent section; a page below the floor is left out.
			name: "threads_and_recent",
			in: InjectionInput{
				Pages: []memory.PageHit{
					{ID: "w1", ThreadID: "work", Time: day, User: "Deploy is on Thursday", Reply: "Noted."},
					{ID: "h1", ThreadID: "home", Time: day, User: "Groceries on Thursday", Reply: "Okay."},
					{ID: "r1", ThreadID: "home", Time: day.Add(time.Hour), User: "What is on Thursday?", Reply: "Groceries."},
					{ID: "x1", ThreadID: "home", Time: day, User: "Unrelated", Reply: "Hidden."},
				},
				PageNotes: []ItemNote{{}, {}, {}, {Hidden: true}},
				Recent:    []memory.RecentTurn{{ID: "r1", Time: day.Add(time.Hour), User: "What is on Thursday?", Reply: "Groceries."}},
			},
		},
		{
			// A dialogue of two named people recorded as "Name: …": the
			// names say who spoke; small talk cut whole, a closing run
			// marked with an ellipsis, an exchange of only small talk
			// not shown.
			name: "dialogue",
			in: InjectionInput{
				Pages: []memory.PageHit{
					{ID: "d1", ThreadID: "default", Time: day, User: "Tim: I've been writing articles about fantasy novels for an online magazine.", Reply: "John: Congrats! How did it happen? Take care, talk soon!"},
					{ID: "d2", ThreadID: "default", Time: day, User: "Tim: Thanks!", Reply: "John: I signed up for a half marathon in June."},
					{ID: "d3", ThreadID: "default", Time: day, User: "Tim: Same here!", Reply: "John: Catch you later!"},
				},
				PageNotes: []ItemNote{{Seq: 0}, {Seq: 1}, {Seq: 2}},
			},
		},
		{
			// A question that names a speaker: the best page quoted
			// whole, each page after it only the named speaker's side
			// (an answer sharing no word with the question included); a
			// page the other speaker said alone is left out.
			name: "named_speaker",
			in: InjectionInput{
				Query: QueryTerms("What kind of writing does Tim do?"),
				Pages: []memory.PageHit{
					{ID: "n1", ThreadID: "default", Time: day, User: "Tim: I've been writing articles about fantasy novels for an online magazine.", Reply: "John: Congrats! How did it happen?"},
					{ID: "n2", ThreadID: "default", Time: day, User: "John: What kind of articles do you write?", Reply: "Tim: Reviews of new books, mostly epic fantasy."},
					{ID: "n3", ThreadID: "default", Time: day.AddDate(0, 0, 1), User: "John: My writing class starts Monday.", Reply: "John: I'm a bit nervous about it."},
				},
				PageNotes: []ItemNote{{Seq: 0}, {Seq: 1}, {Seq: 2}},
			},
		},
	}
	count := newCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Budget = 2000
			text, n := BuildInjection(count, tt.in)
			if real := mustCounter(t).Count(text); real != n {
				t.Errorf("reported %d tokens, tiktoken counts %d", n, real)
			}
			path := filepath.Join("testdata", "injection", tt.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run with -update to create it): %v", err)
			}
			if got := text + "\n"; got != string(want) {
				t.Errorf("injection differs from %s:\n%s\nwant\n%s", path, got, want)
			}
			if strings.Contains(text, "Topic:") != strings.Contains(string(want), "Topic:") {
				t.Errorf("topic line mismatch")
			}
		})
	}
}
