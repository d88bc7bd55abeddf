package recall

import (
	"strings"
	"testing"
)

// FuzzMayNameDate: a query mayNameDate rules out holds no date expression
// and no Chinese relative day, so skipping them changes nothing.
func FuzzMayNameDate(f *testing.F) {
	for _, s := range []string{"What did I do last weekend?", "When did Caroline go to the LGBTQ support group?",
		"What should I cook for dinner tonight?", "on 8 May, 2023", "in the ſpring of 2020", "上周我去了哪里", "KELVIN",
		"What book am I currently reading?", "two weeks ago", "Which airlines did I fly with?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		lower := strings.ToLower(query)
		if mayNameDate(lower) {
			return
		}
		for _, re := range dateExpressions() {
			if loc := re.FindStringIndex(lower); loc != nil {
				t.Fatalf("%q: %v matches %q, but mayNameDate ruled it out", query, re, lower[loc[0]:loc[1]])
			}
		}
		for _, w := range zhRelative {
			if strings.Contains(query, w) {
				t.Fatalf("%q holds %q, but mayNameDate ruled it out", query, w)
			}
		}
	})
}

func TestMayNameDate(t *testing.T) {
	for q, want := range map[string]bool{
		"What did I do last weekend?":               true,
		"How many days ago did I attend a meetup?":  true,
		"What happened on 8 May, 2023?":             true,
		"上周我去了哪里":                                   true,
		"What should I cook for dinner?":            false,
		"Which airlines did I fly with?":            false,
		"What is Caroline's favourite book series?": false,
	} {
		if got := mayNameDate(strings.ToLower(q)); got != want {
			t.Errorf("mayNameDate(%q) = %v, want %v", q, got, want)
		}
	}
}
