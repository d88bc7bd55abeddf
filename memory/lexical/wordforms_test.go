package lexical

import (
	"slices"
	"strings"
	"testing"
)

// TestWordForms checks that a query finds a text that says the same thing
// with another form of the word: through the stemmer or the prefix field.
func TestWordForms(t *testing.T) {
	tests := []struct {
		query, text string
	}{
		{"deployment", "how do we deploy the app?"},
		{"deploy", "the deployment failed twice"},
		{"migration", "We are migrating the billing service"},
		{"migrating", "the database migration ran overnight"},
		{"any allergies?", "I'm allergic to sesame"},
		{"allergic", "she has a peanut allergy"},
		{"organise", "help me organize the garage"},
		{"organization", "the organisation moved offices"},
		{"tracker", "I track my runs every morning"},
		{"tracking", "my fitness tracker broke"},
		{"realise", "I did not realize it was late"},
	}
	for _, tt := range tests {
		t.Run(tt.query+"/"+tt.text, func(t *testing.T) {
			ix := mustIndex(t, tt.text, "the weather is nice today", "we had pasta for dinner")
			if got := ids(ix.Search(tt.query, 10, nil)); !slices.Equal(got, []int{0}) {
				t.Errorf("Search(%q) = ids %v, want [0] (%q)", tt.query, got, tt.text)
			}
			if got := ix.Similarity(tt.query, tt.text); !(got > 0) {
				t.Errorf("Similarity(%q, %q) = %v, want > 0", tt.query, tt.text, got)
			}
			if got := ids(ix.SearchTerms(queryTerms(tt.query), 10, nil)); !slices.Equal(got, []int{0}) {
				t.Errorf("SearchTerms(%q) = ids %v, want [0]", tt.query, got)
			}
		})
	}
}

func queryTerms(query string) []Term {
	var out []Term
	for _, tok := range Tokenize(query) {
		out = append(out, Term{Text: tok, Weight: 1})
	}
	return out
}

// TestPrefixBelowExact checks that the prefix field ranks an exact form
// above a derivation, and a derivation above nothing.
func TestPrefixBelowExact(t *testing.T) {
	ix := mustIndex(t, "the deployment is done", "deploy it now", "nothing related here")
	if got := ids(ix.Search("deploy", 10, nil)); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("Search(deploy) = ids %v, want [1 0]", got)
	}
	var terms []string
	ix.DocTerms(0, func(term string, _ int) { terms = append(terms, term) })
	slices.Sort(terms)
	if want := []string{"deploy", "done"}; !slices.Equal(terms, want) {
		t.Errorf("DocTerms(0) = %q, want %q (no prefix terms)", terms, want)
	}
}

// TestEnglishAndChinese is a sanity check of the analyzer on a short
// mixed memory: each question finds the one text that answers it.
func TestEnglishAndChinese(t *testing.T) {
	texts := []string{
		"I'm allergic to sesame and shellfish.",
		"We are migrating the billing service to PostgreSQL next week.",
		"上海小组决定用PostgreSQL数据库，不用MySQL。",
		"北京团队周五发布了新版本的移动应用。",
		"My sister's organisation runs a marathon every spring.",
		"Deploying on Fridays is forbidden by the team's policy.",
	}
	tests := []struct {
		query string
		want  int
	}{
		{"Any allergies I should know about?", 0},
		{"When is the billing migration?", 1},
		{"上海小组用什么数据库？", 2},
		{"北京团队什么时候发布？", 3},
		{"what organization does my sister belong to", 4},
		{"can we do a deployment on friday?", 5},
	}
	ix := mustIndex(t, texts...)
	for _, tt := range tests {
		hits := ix.Search(tt.query, 3, nil)
		if len(hits) == 0 || hits[0].ID != tt.want {
			t.Errorf("Search(%q) = %v, want %d (%q) first", tt.query, hits, tt.want, texts[tt.want])
		}
	}
	got := strings.Join(Tokenize("We're migrating 数据库 to PostgreSQL; organisations deploy daily."), " ")
	if want := "migrat 数据 据库 postgresql organis deploy daili"; got != want {
		t.Errorf("Tokenize = %q, want %q", got, want)
	}
}
