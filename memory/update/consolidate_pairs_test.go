package update

import (
	"testing"
)

// mergePairs are labelled fact pairs for choosing mergeSimilarity:
// near-duplicates (the same statement reworded, as the updater, a client
// retry or a second conversation produce them) and distinct statements
// that share many words.
var mergePairs = []struct {
	a, b string
	dup  bool
	// miss marks a pair that term overlap gets wrong, a known limit.
	miss bool
}{
	{"Has a dog named Rex", "has a dog called Rex", true, true},           // a synonym
	{"Prefers tabs over spaces", "Prefers spaces over tabs", false, true}, // word order
	{"Uses Go for backend work", "uses Go for the backend", true, false},
	{"Prefers dark mode in the editor", "The user prefers dark mode in their editor", true, false},
	{"Works at Acme Corp as a staff engineer", "Works as a staff engineer at Acme Corp.", true, false},
	{"Lives in Berlin", "User lives in Berlin", true, false},
	{"Is learning Japanese", "Currently learning Japanese", true, true}, // two terms in common
	{"Enjoys hiking on weekends", "Enjoys hiking at weekends", true, false},
	{"Wants to run a marathon next year", "Wants to run a marathon in the next year", true, false},
	{"Prefers tabs over spaces", "Prefers tabs to spaces", true, false},
	{"Caroline is a transgender woman", "Caroline is transgender woman.", true, false},
	{"Melanie paints landscapes", "Melanie likes to paint landscapes", true, false},
	{"Drinks green tea every morning", "drinks green tea each morning", true, false},
	{"Allergic to peanuts", "The user is allergic to peanuts", true, false},
	{"Plays the guitar", "Plays guitar", true, false},
	{"Reads science fiction novels", "Reads science-fiction novels", true, false},
	{"Uses PostgreSQL for production databases", "Uses PostgreSQL for the production database", true, false},
	{"Drinks tea", "Drinks tea daily", true, true}, // two terms in common

	{"Likes cats", "Likes dogs", false, false},
	{"Lives in Berlin", "Lives in Paris", false, false},
	{"Works at Acme Corp", "Worked at Acme Corp before joining Globex", false, false},
	{"Has two kids", "Has three kids", false, false},
	{"Has 2 kids", "Has 3 kids", false, false},
	{"Likes coffee", "Does not like coffee", false, false},
	{"Likes coffee", "No longer likes coffee", false, false},
	{"Prefers Python for scripts", "Prefers Go for services", false, false},
	{"Uses Go for backend work", "Uses TypeScript for frontend work", false, false},
	{"Is learning Japanese", "Is learning Spanish", false, false},
	{"Runs every morning", "Swims every morning", false, false},
	{"Wants to move to Canada", "Wants to visit Canada", false, false},
	{"Caroline went to a LGBTQ support group", "Caroline went to a LGBTQ pride parade", false, false},
	{"Melanie has three children", "Melanie has a son", false, false},
	{"Uses Vim as editor", "Uses VS Code as editor", false, false},
	{"Birthday is on 12 May", "Birthday is on 21 May", false, false},
	{"Works remotely on Mondays and Fridays", "Works in the office on Mondays and Fridays", false, false},
}

// TestMergeThreshold checks mergeSimilarity against the labelled pairs:
// every pair but the known misses is told apart, and the figures are
// logged.
func TestMergeThreshold(t *testing.T) {
	for _, p := range mergePairs {
		sim := factSimilarity(TermsOf(p.a), TermsOf(p.b))
		got := sim >= mergeSimilarity
		t.Logf("%.3f dup=%v %q / %q", sim, p.dup, p.a, p.b)
		if got != p.dup && !p.miss {
			t.Errorf("similarity(%q, %q) = %.3f: near-duplicate %v, want %v", p.a, p.b, sim, got, p.dup)
		}
	}
}
