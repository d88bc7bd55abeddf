package recall

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// TestNeighboursOnlyInDialogues: a page cut from a dialogue between named
// people lends its score to the next page of the sitting (the answer may
// run into it); an exchange a host stores, whole in itself, lends nothing
// to a page that matches on its own, and one that matches nothing comes
// along below it.
func TestNeighboursOnlyInDialogues(t *testing.T) {
	st := sittingPages(t,
		[][2]string{
			{"Tim: I finally bought the walnut bookshelf.", "John: Where did it go?"},
			{"Tim: Next to the window, it fits perfectly.", "John: Nice."},
		},
		[][2]string{
			{"I finally bought the walnut bookshelf.", "Great choice: walnut ages well."},
			{"Can you suggest a plant for the window?", "A snake plant needs little light."},
			{"Should I oil the bookshelf?", "Once a year is enough."},
		},
	)
	hits := lexicalPages(st, QueryTerms("walnut bookshelf"), RankPool, feedbackTerms)
	score := map[int]float64{}
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	if score[1] <= 0 {
		t.Errorf("the dialogue page after the match scores %v, want a share of its neighbour's", score[1])
	}
	if score[3] <= 0 || score[3] >= score[2] {
		t.Errorf("the unmatched exchange after the match scores %v, want it along below the match (%v)", score[3], score[2])
	}
	own := st.Index.SearchTerms(QueryTerms("walnut bookshelf"), RankPool, nil)
	for _, h := range own {
		if h.ID == 4 && score[4] > h.Score*1.5 {
			t.Errorf("the matching exchange two after scores %v against its own %v: it borrowed from its neighbours", score[4], h.Score)
		}
	}
}

func TestAskedSide(t *testing.T) {
	tests := []struct {
		query string
		want  int
	}{
		{"How many bikes do I own?", sideUser},
		{"Can you suggest a hotel for my upcoming trip to Miami?", sideUser},
		{"Which traditional game did you say was often performed at powwows?", sideAssistant},
		{"What was Andy wearing in the script you wrote for the comedy scene?", sideAssistant},
		{"What did Caroline research?", sideNone},
		{"When is the team offsite?", sideNone},
	}
	for _, tt := range tests {
		if got := askedSide(tt.query); got != tt.want {
			t.Errorf("askedSide(%q) = %d, want %d", tt.query, got, tt.want)
		}
	}
}

// TestWeighSideUsersWords: for a first-person question over exchanges a
// host stores, the page where the user says the answer comes before the
// one where the assistant's long advice repeats the question's word.
func TestWeighSideUsersWords(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Which lock should I get?", "For bikes, a U-lock is best: register your bikes and own a second lock."}},
		[][2]string{{"By the way, I own three bikes: a road, a mountain and a commuter one.", "That covers every ride."}},
		[][2]string{{"What should I cook tonight?", "A lentil curry."}},
		[][2]string{{"How do I fix a flaky test?", "Remove the sleep and wait on the event."}},
		[][2]string{{"Suggest a podcast about history.", "Try one on the Romans."}},
	)
	query := "How many bikes do I own?"
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hits := Refine(st, query, nil, now, RankPages(st, query, nil, nil, 0, RankPool), 2)
	if len(hits) != 2 || hits[0].ID != 1 {
		t.Errorf("hits = %v, want the user's own statement (1) first", hits)
	}
}

// TestWeighSideOneSided: a page holding only one side is weighed by the
// side asked about like any exchange. An assistant's message stored alone
// holds nothing of a first-person question's answer, however often it
// says the question's words, and a user's message stored alone is weighed
// by what the user says in it.
func TestWeighSideOneSided(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"", "Bikes need care: oil the chain of your bikes weekly, and store bikes indoors so the bikes last."}},
		[][2]string{{"By the way, I own three bikes, a road one among them.", "That covers every ride."}},
		[][2]string{{"Which bikes suit a hilly commute?", ""}},
		[][2]string{{"What should I cook tonight?", "A lentil curry."}},
		[][2]string{{"How do I fix a flaky test?", "Remove the sleep and wait on the event."}},
		[][2]string{{"Suggest a podcast about history.", "Try one on the Romans."}},
	)
	query := "How many bikes do I own?"
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ranked := RankPages(st, query, nil, nil, 0, RankPool)
	if len(ranked) == 0 || ranked[0].ID != 0 {
		t.Fatalf("BM25 ranks %v, want the assistant's message alone (0) first, or the test proves nothing", ranked)
	}
	hits := Refine(st, query, nil, now, ranked, 3)
	pos := map[int]int{}
	for i, h := range hits {
		pos[h.ID] = i
	}
	if len(hits) != 3 {
		t.Fatalf("hits = %v, want 3", hits)
	}
	alone, shown := pos[0]
	if !shown {
		alone = len(hits) // left out: below every page kept
	}
	for _, id := range []int{1, 2} {
		if p, ok := pos[id]; !ok || p > alone {
			t.Errorf("hits = %v, want page %d, where the user says the question's word, before the assistant's message alone (0)", hits, id)
		}
	}
}

// TestStateWordsInFirstPerson: a question asking the user about their
// present state keeps "currently", the word the user said it in; one
// about people in a dialogue drops it as phrasing.
func TestStateWordsInFirstPerson(t *testing.T) {
	tests := []struct {
		query string
		keeps bool
	}{
		{"What book am I currently reading?", true},
		{"Which gym do I currently go to?", true},
		{"What is Caroline currently reading?", false},
		{"What book is being read currently?", false},
	}
	for _, tt := range tests {
		got := slices.Contains(termTexts(QueryTerms(tt.query)), termTexts(QueryTerms("currently"))[0])
		if got != tt.keeps {
			t.Errorf("QueryTerms(%q) holds currently: %v, want %v", tt.query, got, tt.keeps)
		}
	}
	st := sittingPages(t, [][2]string{
		{"How do I fit more reading into a busy day? I'm currently devouring The Seven Husbands of Evelyn Hugo.", "Read a chapter at lunch and before bed."},
		{"Our book club reads a book a month; what book should we be reading next?", "A book club does well with a short book everyone can finish reading."},
		{"Any tips on book storage?", "Keep each book upright, away from sun: book spines fade."},
	})
	const q = "What book am I currently reading?"
	hits := Refine(st, q, nil, time.Now(), RankPages(st, q, nil, nil, 0, 10), 10)
	if len(hits) == 0 || hits[0].ID != 0 {
		t.Fatalf("%q ranks %v first, want the page where the user says what they are currently reading (0)", q, hits)
	}
}

// TestOwnOrderInsideSittings: the exchanges of one sitting are ordered by
// their own score on the query's words, in the places the sitting held;
// another sitting's places and a dialogue's slices stay as they were.
func TestOwnOrderInsideSittings(t *testing.T) {
	st := sittingPages(t,
		[][2]string{
			{"I'm currently devouring a novel.", "Enjoy it."},
			{"Our book club meets Friday.", "A book club needs snacks."},
			{"Tips on book storage?", "Keep books upright."},
		},
		[][2]string{
			{"What should I read next?", "Try a mystery."},
		},
		[][2]string{
			{"Tim: I read a book a week.", "John: Which one now?"},
			{"Tim: A thriller.", "John: Nice."},
		},
	)
	st.updateLinks()
	hits := []lexical.Hit{{ID: 1, Score: 9}, {ID: 3, Score: 8}, {ID: 2, Score: 7}, {ID: 5, Score: 6}, {ID: 0, Score: 5}, {ID: 4, Score: 4}}
	first := []lexical.Hit{{ID: 0, Score: 3}, {ID: 2, Score: 2}, {ID: 1, Score: 1}, {ID: 3, Score: 2}, {ID: 4, Score: 3}, {ID: 5, Score: 1}}
	ownOrder(st, first, hits)
	var got []int
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []int{0, 3, 2, 5, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v: the first sitting's places (0, 2, 4) by own score, the others' kept", got, want)
	}
	if hits[0].Score != 9 || hits[5].Score != 4 {
		t.Errorf("scores = %v, want the places' scores kept", hits)
	}
}

// TestMemberWordsHeld: a page naming a member of a category term holds
// that term, whether it is the query's first term or its 68th; a query
// naming no category raises nothing.
func TestMemberWordsHeld(t *testing.T) {
	st := sittingPages(t, [][2]string{{"We went hiking and surfing last summer.", "Sounds fun."}})
	cat := QueryTerms("activities")[0]
	for _, n := range []int{0, 67} {
		qterms := make([]lexical.Term, 0, n+1)
		for i := range n {
			qterms = append(qterms, lexical.Term{Text: fmt.Sprintf("filler%d", i), Weight: 1})
		}
		qterms = append(qterms, cat)
		m := make([]float64, len(qterms))
		got := (&memberWords{}).held(st, 0, qterms, m)
		if got[n] != 1 || m[n] != 0 {
			t.Errorf("%d terms: held = %v (given %v), want the category term raised to 1 in a copy", len(qterms), got[n], m[n])
		}
	}
	plain := []lexical.Term{{Text: "summer", Weight: 1}, {Text: "beach", Weight: 1}}
	if got := (&memberWords{}).held(st, 0, plain, []float64{1, 0}); got[1] != 0 {
		t.Errorf("no category term: held = %v, want nothing raised", got)
	}
}
