package recall

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

func TestFloorTerms(t *testing.T) {
	tests := []struct {
		query string
		want  []string // the terms of this date-free query
	}{
		{"What did John attend with his colleagues in March 2023?", []string{"What did John attend with his colleagues?"}},
		{"What natural disaster affected John's old area on 7 July, 2023?", []string{"What natural disaster affected John's old area?"}},
		{"Who did Maria have dinner with on May 3, 2023?", []string{"Who did Maria have dinner with?"}},
		{"What did I finish yesterday?", []string{"What did I finish?"}},
		{"我昨天吃了什么", []string{"我 吃了什么"}},
		{"Which greyhound food is best?", []string{"Which greyhound food is best?"}},
		{"Which concerts did I attend in the past two months?", []string{"Which concerts did I attend in the?"}},
		{"What did I cook over the past week?", []string{"What did I cook over the?"}},
		{"Who gave me a piece of jewelry last Saturday?", []string{"Who gave me a piece of jewelry?"}},
		{"What did I bake a couple of days ago?", []string{"What did I bake?"}},
		// Only a date: its terms are kept.
		{"March 2023", []string{"March 2023"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := termTexts(FloorTerms(tt.query))
			want := termTexts(QueryTerms(tt.want[0]))
			if !slices.Equal(got, want) {
				t.Errorf("FloorTerms(%q) = %q, want %q", tt.query, got, want)
			}
		})
	}
}

// TestRelevantDatedQuestion checks that a question naming a date finds
// the exchange that answers it above the floor: its words hold what is
// asked, its time the date.
func TestRelevantDatedQuestion(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Tim: We went to a veterans charity run with my colleagues.", "John: That sounds great!"}},
		[][2]string{{"Tim: I baked bread today.", "John: Yum."}},
		[][2]string{{"Tim: My sister visited.", "John: Nice!"}},
	)
	query := "What did Tim attend with his colleagues on 1 May, 2024?"
	hits := []lexical.Hit{{ID: 0, Score: 2}, {ID: 1, Score: 0.1}}
	if got := Relevant(st, QueryTerms(query), hits, false); got[0] {
		t.Fatalf("the test's premise: with the date's words the page is expected below the floor, got %v", got)
	}
	if got := Relevant(st, FloorTerms(query), hits, false); !got[0] || got[1] {
		t.Errorf("Relevant(FloorTerms(%q)) = %v, want [true false]", query, got)
	}
}

// FuzzFloorTerms checks that blanking a query's dates keeps it valid text
// of the same length and never panics.
func FuzzFloorTerms(f *testing.F) {
	for _, s := range []string{"in May 2023", "on 7 July, 2023", "昨天", "2023年5月3日", "last week", "İstanbul in March", "\xff march"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		rest := withoutDates(query)
		if len(rest) != len(strings.ToLower(query)) {
			t.Errorf("withoutDates(%q) = %q: length changed", query, rest)
		}
		if utf8.ValidString(query) && !utf8.ValidString(rest) {
			t.Errorf("withoutDates(%q) = %q: not valid UTF-8", query, rest)
		}
		FloorTerms(query)
	})
}
