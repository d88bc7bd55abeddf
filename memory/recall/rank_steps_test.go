package recall

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// sittingPages builds a Pages over exchanges, each given as user and reply;
// a sitting holds the exchanges of one string slice (a minute apart), and
// sittings are a day apart.
func sittingPages(t *testing.T, sittings ...[][2]string) *Pages {
	t.Helper()
	st := &Pages{Index: lexical.New(lexical.Options{}), Threads: make(map[string][]int)}
	day := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	for s, sitting := range sittings {
		for i, ex := range sitting {
			p := len(st.Turns)
			turn := &memory.Turn{ID: "p" + string(rune('a'+p)), Seq: int64(p + 1), ThreadID: "default",
				Time: day.Add(time.Duration(s)*24*time.Hour + time.Duration(i)*time.Minute), User: ex[0], Reply: ex[1]}
			st.Turns = append(st.Turns, turn)
			st.Threads["default"] = append(st.Threads["default"], p)
			st.Index.Add(p, turn.Text())
		}
	}
	return st
}

func termTexts(terms []lexical.Term) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t.Text
	}
	return out
}

func TestSearchTerms(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		keywords []string
		want     []string
		weights  []float64
	}{
		{"no keywords", "Which dog did Caroline adopt?", nil, []string{"dog", "carolin", "adopt"}, []float64{1, 1, 1}},
		{"keywords after the query, at the weight of its words", "what did she adopt", []string{"puppy", "shelter dog"}, []string{"adopt", "puppi", "shelter", "dog"}, []float64{1, 1, 1, 1}},
		{"a keyword the query holds is not added twice", "adopt a dog", []string{"dog", "Dogs"}, []string{"adopt", "dog"}, []float64{1, 1}},
		{"asking words in keywords are dropped", "trip", []string{"remember", "Paris"}, []string{"trip", "pari"}, []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SearchTerms(tt.query, tt.keywords)
			if !slices.Equal(termTexts(got), tt.want) {
				t.Fatalf("terms = %v, want %v", termTexts(got), tt.want)
			}
			for i, g := range got {
				if g.Weight != tt.weights[i] {
					t.Errorf("term %q weight = %v, want %v", g.Text, g.Weight, tt.weights[i])
				}
			}
		})
	}
}

func TestKeywordTermsBounded(t *testing.T) {
	var many []string
	for i := range 3 * MaxKeywords {
		many = append(many, "word"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if n := len(KeywordTerms(many)); n != MaxKeywords {
		t.Errorf("KeywordTerms of %d words gave %d terms, want %d", len(many), n, MaxKeywords)
	}
}

func TestKeywordsFindWhatTheQueryMisses(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Mel: I finally brought home a puppy from the shelter!", "Caroline: So cute, what is its name?"}},
		[][2]string{{"Mel: The weather was awful today.", "Caroline: Same here, rain all day."}},
		[][2]string{{"Mel: I started a new morning routine.", "Caroline: Tell me more."}},
		[][2]string{{"Mel: Work was busy.", "Caroline: Mine too."}},
		[][2]string{{"Mel: We painted the fence.", "Caroline: What colour?"}},
	)
	query := "What did Mel adopt?"
	without := RankPages(st, query, nil, nil, 0, 5)
	if len(without) > 0 && without[0].ID == 0 {
		t.Fatalf("the query alone already ranks the puppy page first: %v", without)
	}
	with := RankPages(st, query, []string{"puppy", "dog", "shelter"}, nil, 0, 5)
	if len(with) == 0 || with[0].ID != 0 {
		t.Errorf("with keywords the best page is %v, want the puppy page (0)", with)
	}
}

func TestAsksForList(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		{"What foods does Nebraas like?", true},
		{"In what countries has Paola been?", true},
		{"Which activities does Kevin have with his friends?", true},
		{"What types of yoga has Maria practiced?", true},
		{"How many dog names did Nebraas tell Vanessa about?", true},
		{"Where has Emi traveled?", true},
		{"What is the order of the concerts I attended, starting from the earliest?", true},
		{"In what sequence did I visit the three museums?", true},
		{"Which order did the parcels arrive in?", true},
		{"Did I get a bigger discount on my first order from HelloFresh?", false},
		{"What did I order at the cafe?", false},
		{"What is Caroline's favourite book?", false},
		{"When did Melanie paint a sunrise?", false},
		{"What does John's dog look like?", false},
		{"Where does Nebraas live?", false},
		{"Who does Nebraas live with?", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := asksForList(tt.query); got != tt.want {
			t.Errorf("asksForList(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestSpreadSittings(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"a", "a"}, {"b", "b"}, {"c", "c"}},
		[][2]string{{"d", "d"}},
	)
	tests := []struct {
		name string
		in   []lexical.Hit
		want []int
	}{
		{"a second sitting's page passes the first sitting's third",
			[]lexical.Hit{{ID: 0, Score: 10}, {ID: 1, Score: 9}, {ID: 2, Score: 8}, {ID: 3, Score: 6}},
			[]int{0, 1, 3, 2}},
		{"the best page keeps its place", []lexical.Hit{{ID: 1, Score: 10}, {ID: 3, Score: 9.9}, {ID: 0, Score: 9}},
			[]int{1, 3, 0}},
		{"pages of distinct sittings keep their order", []lexical.Hit{{ID: 0, Score: 3}, {ID: 3, Score: 2}},
			[]int{0, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := slices.Clone(tt.in)
			spreadSittings(st, hits)
			var got []int
			for _, h := range hits {
				got = append(got, h.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSittingPrior(t *testing.T) {
	// Sitting 0: pages 0–2; sitting 1: pages 3–4; sitting 2: page 5.
	st := sittingPages(t,
		[][2]string{{"a", "a"}, {"b", "b"}, {"c", "c"}},
		[][2]string{{"d", "d"}, {"e", "e"}},
		[][2]string{{"f", "f"}},
	)
	st.updateLinks()
	tests := []struct {
		name string
		hits []lexical.Hit
		out  []lexical.Hit
		want []float64
	}{
		{"a sitting scores its two best pages, normalised to the best sitting",
			[]lexical.Hit{{ID: 0, Score: 10}, {ID: 3, Score: 8}, {ID: 4, Score: 8}, {ID: 1, Score: 2}, {ID: 2, Score: 2}},
			[]lexical.Hit{{ID: 2, Score: 5}, {ID: 4, Score: 5}, {ID: 5, Score: 5}},
			// sittings: 0 → 10+2 = 12, 1 → 8+8 = 16 (the best), 2 → 0.
			[]float64{5 + sittingShare*12.0/16*10, 5 + sittingShare*10, 5}},
		{"nothing scored, nothing added",
			nil, []lexical.Hit{{ID: 0, Score: 1}}, []float64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := slices.Clone(tt.out)
			sittingPrior(st, tt.hits, out)
			for i, h := range out {
				if math.Abs(h.Score-tt.want[i]) > 1e-9 {
					t.Errorf("page %d score = %v, want %v", h.ID, h.Score, tt.want[i])
				}
			}
		})
	}
}

func TestSittingPriorKeepsTheBestPageFirst(t *testing.T) {
	// The answer sits alone in its sitting; three other pages of one
	// sitting share a weaker word with the query. The page that matches
	// the question best stays first.
	st := sittingPages(t,
		[][2]string{{"Mel: We adopted a puppy named Luna from the shelter.", "Caroline: Lovely!"}},
		[][2]string{
			{"Mel: The shelter was busy.", "Caroline: Oh?"},
			{"Mel: The shelter needs help.", "Caroline: I can help."},
			{"Mel: The shelter had a fair.", "Caroline: Fun."},
		},
	)
	hits := RankPages(st, "What puppy did Mel adopt from the shelter?", nil, nil, 0, 4)
	if len(hits) == 0 || hits[0].ID != 0 {
		t.Errorf("best page = %v, want the adoption page (0) first", hits)
	}
}

func TestFocus(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"Nicolas: I drove my aunt to the airport at 5am.", "Nebraas: So early!"},
		{"Nebraas: How long was the check-in?", "Nicolas: Three hours."},
		{"Nicolas: My aunt flies home tomorrow.", "Nebraas: Safe travels to her."},
	})
	qterms := QueryTerms("When did Nicolas take his aunt to the airport?")
	tests := []struct {
		name string
		in   []lexical.Hit
		want []int
	}{
		{"the page holding the question's words passes the neighbour that borrowed its score",
			[]lexical.Hit{{ID: 1, Score: 10}, {ID: 0, Score: 9}, {ID: 2, Score: 4}}, []int{0, 1, 2}},
		{"a clear lead is kept", []lexical.Hit{{ID: 1, Score: 30}, {ID: 0, Score: 9}}, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := slices.Clone(tt.in)
			focus(st, qterms, nil, hits, 0)
			var got []int
			for _, h := range hits {
				got = append(got, h.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
			for i, h := range hits {
				if h.Score != tt.in[i].Score {
					t.Errorf("score at %d = %v, want %v (the scores keep their sequence)", i, h.Score, tt.in[i].Score)
				}
			}
		})
	}
}

func TestRefineOrderIndependentOfK(t *testing.T) {
	var sittings [][][2]string
	// Distinct term counts and lengths, so that no two pages tie.
	for i := range 30 {
		sittings = append(sittings, [][2]string{
			{"Mel: " + strings.Repeat("roses ", i%4+1) + strings.Repeat("garden ", i%3+1) + strings.Repeat("and then ", i), "Caroline: lovely"},
			{"Mel: weeding the garden again " + strings.Repeat("later ", i), "Caroline: ok"}})
	}
	st := sittingPages(t, sittings...)
	now := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	query := "What does Mel grow in the garden, roses?"
	all := Refine(st, query, nil, now, RankPages(st, query, nil, nil, 0, RankPool), 20)
	for _, k := range []int{1, 5, 10} {
		got := Refine(st, query, nil, now, RankPages(st, query, nil, nil, 0, RankPool), k)
		for i := range got {
			if got[i].ID != all[i].ID {
				t.Fatalf("k=%d: page %d is %d, want %d (the order with k=20)", k, i, got[i].ID, all[i].ID)
			}
		}
	}
}

func TestWordNetCategories(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"Nate: I made a chocolate mousse and some tiramisu.", "Joanna: Yum!"},
		{"Nate: Then we went hiking.", "Joanna: Fun."},
	})
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"a category only WordNet's table has", "What desserts does Nate like?", []string{"dessert", "nate", "mouss", "tiramisu"}},
		{"the hand-written table keeps its categories", "What activities does Nate do?", []string{"activ", "nate", "hike"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termTexts(withVariants(st, QueryTerms(tt.query))); !slices.Equal(got, tt.want) {
				t.Errorf("terms = %v, want %v", got, tt.want)
			}
		})
	}
	// Every line of the generated table is a category and members, and
	// names no category of the hand-written one.
	hand := make(map[string]bool)
	for _, l := range categories {
		hand[strings.Fields(l)[0]] = true
	}
	n := 0
	for _, l := range strings.Split(wordnetCategories, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		n++
		f := strings.Fields(l)
		if len(f) < 2 || hand[f[0]] {
			t.Errorf("WordNet table line %q: want a category the hand table lacks and members", l)
		}
	}
	if n == 0 {
		t.Error("WordNet table is empty")
	}
}

func TestVariants(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"Mel: We went to the theatre with the children.", "Caroline: Which film?"},
		{"Mel: My self-care routine is yoga.", "Caroline: Nice weekend plan."},
	})
	tests := []struct {
		name    string
		query   string
		want    []string
		weights []float64
	}{
		{"irregular verb and plural, British spelling", "go theater child", []string{"go", "theater", "child", "went", "theatr", "children"}, []float64{1, 1, 1, 0.5, 0.5, 0.5}},
		{"synonym at half a form's weight", "movie", []string{"movi", "film"}, []float64{1, 0.25}},
		{"variants absent from the index are not searched", "buy kid", []string{"buy", "kid"}, []float64{1, 1}},
		{"a variant the query holds is not added twice", "went go", []string{"went", "go"}, []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withVariants(st, QueryTerms(tt.query))
			if !slices.Equal(termTexts(got), tt.want) {
				t.Fatalf("terms = %v, want %v", termTexts(got), tt.want)
			}
			for i, g := range got {
				if g.Weight != tt.weights[i] {
					t.Errorf("term %q weight = %v, want %v", g.Text, g.Weight, tt.weights[i])
				}
			}
		})
	}
}

func TestCategoryMembers(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"John: I started surfing five years ago.", "Maria: Brave!"},
		{"John: My dog keeps me busy.", "Maria: And the outdoors?"},
	})
	tests := []struct {
		name    string
		query   string
		want    []string
		weights []float64
	}{
		{"a category adds its members the index holds, at a quarter", "What outdoor activities does John enjoy?", []string{"outdoor", "activ", "john", "enjoy", "surf"}, []float64{1, 1, 1, 1, 0.25}},
		{"plural and singular category alike", "which pets", []string{"pet", "dog"}, []float64{1, 0.25}},
		{"members are one-way: a member does not add its category", "surfing", []string{"surf"}, []float64{1}},
		{"a member the query holds is not added twice", "surfing activities", []string{"surf", "activ"}, []float64{1, 1}},
		{"members absent from the index are not searched", "favourite food", []string{"favourit", "food"}, []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withVariants(st, QueryTerms(tt.query))
			if !slices.Equal(termTexts(got), tt.want) {
				t.Fatalf("terms = %v, want %v", termTexts(got), tt.want)
			}
			for i, g := range got {
				if g.Weight != tt.weights[i] {
					t.Errorf("term %q weight = %v, want %v", g.Text, g.Weight, tt.weights[i])
				}
			}
		})
	}
}

func TestCategoryFindsAMemberPage(t *testing.T) {
	// The page that answers shares no word with the question but a member
	// of the category it names.
	st := sittingPages(t,
		[][2]string{{"Work was long today.", "Rest up."}},
		[][2]string{{"I started surfing five years ago.", "Brave!"}},
		[][2]string{{"Enjoy the weekend!", "You too."}},
	)
	hits := RankPages(st, "What outdoor activities does John enjoy?", nil, nil, 0, 3)
	var ids []int
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if !slices.Contains(ids, 1) {
		t.Fatalf("pages = %v, want the surfing page (1) among them", ids)
	}
}

func TestVariantTablesAreWords(t *testing.T) {
	// Every entry must analyse to one term, or the table silently loses it.
	for _, table := range [][]string{wordForms, synonyms, categories} {
		for _, g := range table {
			for _, w := range strings.Fields(g) {
				if toks := lexical.Tokenize(w); len(toks) != 1 {
					t.Errorf("%q in group %q analyses to %q, want one term", w, g, toks)
				}
			}
		}
	}
}

func TestListQuestionSpreadsOverSittings(t *testing.T) {
	// Three pages of one sitting about hiking and one of another, ranked
	// in that order: asked for several items, the other sitting's page
	// comes into the first three; asked for one, it stays fourth.
	st := sittingPages(t,
		[][2]string{
			{"Jon: I went hiking at Mount Tam.", "Ana: Nice!"},
			{"Jon: More pictures from hiking Mount Tam.", "Ana: Lovely."},
			{"Jon: The hiking at Mount Tam was long.", "Ana: Wow."},
		},
		[][2]string{{"Jon: Hiking in Yosemite this time.", "Ana: Have fun."}},
	)
	top := func(query string) []int {
		hits := []lexical.Hit{{ID: 0, Score: 10}, {ID: 1, Score: 9}, {ID: 2, Score: 8}, {ID: 3, Score: 7}}
		var ids []int
		for _, h := range Refine(st, query, nil, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), hits, 3) {
			ids = append(ids, h.ID)
		}
		return ids
	}
	if got := top("Which places has Jon gone hiking?"); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("list question: top 3 = %v, want [0 1 3] (the other sitting before the third page of the first)", got)
	}
	if got := top("Where did Jon go hiking?"); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("question for one item: top 3 = %v, want [0 1 2]", got)
	}
}

// FuzzQueryAnalysis feeds arbitrary queries and keywords to the query's
// analysis: it never panics, keyword terms stay bounded and weighted
// below the query's, and a list question is decided the same way twice.
func FuzzQueryAnalysis(f *testing.F) {
	for _, s := range []string{"What foods does Nebraas like?", "how many", "Where has Emi traveled?", "什么时候", "what 's's", "WHICH Things", ""} {
		f.Add(s, "puppy dog")
	}
	f.Fuzz(func(t *testing.T, query, keyword string) {
		first := asksForList(query)
		if again := asksForList(query); again != first {
			t.Fatal("asksForList is not deterministic")
		}
		terms := SearchTerms(query, []string{keyword, keyword})
		q := len(QueryTerms(query))
		if len(terms) < q || len(terms) > q+MaxKeywords {
			t.Fatalf("SearchTerms gave %d terms for %d query terms", len(terms), q)
		}
		for _, k := range terms[q:] {
			if k.Weight != keywordWeight {
				t.Fatalf("keyword term %q weighs %v, want %v", k.Text, k.Weight, keywordWeight)
			}
		}
	})
}

// TestRankIsRepeatable: the same query over the same pages gives the very
// same scores every time. The feedback search's terms once came in map
// order, and a sum taken in another order differs in its last digits:
// pages that tie swapped places from one call to the next.
func TestRankIsRepeatable(t *testing.T) {
	var sittings [][][2]string
	for i := range 12 {
		sittings = append(sittings, [][2]string{
			{"Mel: the garden roses tulips and basil need water", "Caroline: lovely, my garden has roses too"},
			{fmt.Sprintf("Mel: pottery class %d, then painting and a swim", i%3), "Caroline: what a week of roses and pottery"}})
	}
	st := sittingPages(t, sittings...)
	query := "What does Mel grow in the garden and which classes does she take?"
	first := RankPages(st, query, nil, nil, 0, RankPool)
	for range 30 {
		got := RankPages(st, query, nil, nil, 0, RankPool)
		if !slices.Equal(got, first) {
			t.Fatalf("a second ranking differs:\n%v\nwant\n%v", got, first)
		}
	}
}

// TestListMembersInSpeakerStep checks that for a question asking for
// several items, a page where the named person names a member of the
// category asked for ("tennis" for "sports") counts it as the category
// word in the speaker step and in focus (listMemberShare), and that a
// question asking for one item does not.
func TestListMembersInSpeakerStep(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"Ben: Ann, which sports do you enjoy?", "Ann: Honestly none, I just watch TV."},
		{"Ann: I enjoy tennis on Sunday mornings.", "Ben: Sounds fun."},
	}, [][2]string{
		{"Ben: I bought a new sofa.", "Ann: Nice colour."},
		{"Ann: The weather was grey all week.", "Ben: Same here."},
	})
	now := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		query string
		first int
	}{
		{"What sports does Ann enjoy?", 1},
		{"Which sport does Ann enjoy?", 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits := []lexical.Hit{{ID: 0, Score: 10}, {ID: 1, Score: 8}, {ID: 2, Score: 1}, {ID: 3, Score: 0.5}}
			got := Refine(st, tt.query, nil, now, hits, 4)
			if got[0].ID != tt.first {
				t.Errorf("first page = %d, want %d (%v)", got[0].ID, tt.first, got)
			}
		})
	}
}

func TestWordMatch(t *testing.T) {
	tests := []struct {
		word, q        string
		prefix, member float64
		want           float64
	}{
		{"tenni", "sport", 0.5, 0.5, 0.5},
		{"tenni", "sport", 0.5, 0, 0},
		{"sport", "sport", 0.5, 0.5, 1},
		{"deployment", "deploy", 0.5, 0.4, 0.5},
		{"sport", "tenni", 0.5, 0.5, 0},
	}
	for _, tt := range tests {
		if got := wordMatch(tt.word, tt.q, tt.prefix, tt.member); got != tt.want {
			t.Errorf("wordMatch(%q, %q, %v, %v) = %v, want %v", tt.word, tt.q, tt.prefix, tt.member, got, tt.want)
		}
	}
}

func TestHasName(t *testing.T) {
	tests := []struct {
		side string
		want bool
	}{
		{"Tim: I just finished The Name of the Wind, loved it.", true},
		{"Tim: Last week we flew to Lisbon with the kids.", true},
		{"Tim: Today I read a lot. Then I slept.", false},
		{"Tim: I’m reading again, I've missed it.", false},
		{"Tim: thanks John, you too!", false},
		{"Tim: Great! Thanks!", false},
	}
	for _, tt := range tests {
		if got := hasName(tt.side, "tim", "john"); got != tt.want {
			t.Errorf("hasName(%q) = %v, want %v", tt.side, got, tt.want)
		}
	}
}

// TestListNamesInSpeakerStep checks that for a list question about a
// category of names ("books"), the page where the named person names a
// title comes before the page where the other person uses the question's
// words, and that a question asking for one item is left as it was.
func TestListNamesInSpeakerStep(t *testing.T) {
	st := sittingPages(t, [][2]string{
		{"Ann: Have you read any good books lately, Tim?", "Tim: Not much, work has been busy."},
	}, [][2]string{
		{"Ann: What are you up to?", "Tim: Finally finished The Hobbit, what a story."},
	})
	qterms := QueryTerms("What books has Tim read?")
	for _, tt := range []struct {
		member float64
		first  int
	}{{listMemberShare, 1}, {0, 0}} {
		hits := []lexical.Hit{{ID: 0, Score: 10}, {ID: 1, Score: 9}}
		weighSpeaker(st, qterms, nil, hits, tt.member)
		SortHits(hits)
		if hits[0].ID != tt.first {
			t.Errorf("memberShare %v: first page = %d, want %d (%v)", tt.member, hits[0].ID, tt.first, hits)
		}
	}
}

// TestListQuestionMoreFeedbackTerms checks that a list question takes
// listFeedbackTerms feedback terms: a page that shares with the question
// only the best page's twelfth most telling term is found for "What books
// has Ann read?" and not for "Which book did Ann read?".
func TestListQuestionMoreFeedbackTerms(t *testing.T) {
	var filler [][2]string
	for i := range 6 {
		filler = append(filler, [2]string{fmt.Sprintf("Ann: Morning number %d.", i), "Ben: Hi."})
	}
	st := sittingPages(t,
		[][2]string{{"Ann: I read books about alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima.", "Ben: Wow."}},
		filler,
		[][2]string{{"Ben: Lima was lovely.", "Cy: Lima again soon."}},
		[][2]string{{"Ben: Lima is far.", "Cy: Yes."}},
	)
	target := len(st.Turns) - 2
	found := func(query string) bool {
		for _, h := range RankPages(st, query, nil, nil, 0, 20) {
			if h.ID == target {
				return true
			}
		}
		return false
	}
	if !found("What books has Ann read?") {
		t.Errorf("list question: page %d (lima) not found", target)
	}
	if found("Which book did Ann read?") {
		t.Errorf("one-item question: page %d (lima) found, want it out of reach of %d feedback terms", target, feedbackTerms)
	}
}

// FuzzHasName reads stored text (any bytes) as a side: hasName must not
// panic, must not count a side without an upper-case letter after its
// "Name:" prefix, and must agree with itself.
func FuzzHasName(f *testing.F) {
	for _, s := range []string{"Tim: I finished The Hobbit.", "Tim:", ":", "Tim: I’m ok. Yes!", "\xff\xfe: A B", "a b C", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, side string) {
		got := hasName(side, "tim")
		if again := hasName(side, "tim"); again != got {
			t.Fatal("hasName is not deterministic")
		}
		body := side
		if i := strings.IndexByte(side, ':'); i > 0 && i <= maxSpeakerName {
			body = side[i+1:]
		}
		if got && strings.ToLower(body) == body {
			t.Fatalf("hasName(%q) = true without an upper-case letter", side)
		}
	})
}

// TestListQuestionMembersWeighMore checks that a list question searches
// the members of the category it names at listCategoryWeight: the page
// naming a member ("tennis" for "sports") comes before the pages holding
// only the question's commoner word, and for a question asking for one
// item (members at categoryWeight) it does not.
func TestListQuestionMembersWeighMore(t *testing.T) {
	sittings := [][][2]string{{{"Ann: Tennis again this morning.", "Ben: Good luck."}}}
	for i := range 3 {
		sittings = append(sittings, [][2]string{{fmt.Sprintf("Ann: I enjoy evening %d at home.", i), "Ben: Same."}})
	}
	for i := range 16 {
		sittings = append(sittings, [][2]string{{fmt.Sprintf("Ben: Weather report %d.", i), "Ann: Grey."}})
	}
	st := sittingPages(t, sittings...)
	rank := func(query string) int {
		for i, h := range RankPages(st, query, nil, nil, 0, 20) {
			if h.ID == 0 {
				return i
			}
		}
		return -1
	}
	if got := rank("What sports does Ann enjoy?"); got != 0 {
		t.Errorf("list question: tennis page at %d, want 0", got)
	}
	if got := rank("Which sport does Ann enjoy?"); got == 0 {
		t.Errorf("one-item question: tennis page first, want it after the pages holding enjoy (members at %v)", categoryWeight)
	}
}

// TestListCoverageCountsSpeakersMembers checks that for a list question
// coverage counts a member of the category the question names as the
// category word when the asked-about speaker says it in the page
// (memberWords): Ann naming tennis comes first, Ben naming it does not
// count for Ann, and a question asking for one item is left as it was.
func TestListCoverageCountsSpeakersMembers(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Ann: I enjoy quiet evenings.", "Ben: Same."}},
		[][2]string{{"Ann: Tennis on Sunday again.", "Ben: Good luck."}},
		[][2]string{{"Ben: Tennis on Sunday again.", "Ann: Good luck."}},
		[][2]string{{"Ben: The sport channel is on.", "Ann: Turn it off."}},
		[][2]string{{"Ben: Do you enjoy the rain?", "Ann: No."}},
	)
	const enjoys, anns, bens = 0, 1, 2
	tests := []struct {
		query string
		list  bool
		first int
		// ann's and ben's tennis pages score alike
		alike bool
	}{
		{"What sports does Ann enjoy?", true, anns, false},
		{"Which sport does Ann enjoy?", false, enjoys, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if asksForList(tt.query) != tt.list {
				t.Fatalf("asksForList(%q) = %v, want %v", tt.query, !tt.list, tt.list)
			}
			hits := []lexical.Hit{{ID: enjoys, Score: 1.01}, {ID: anns, Score: 1}, {ID: bens, Score: 1}}
			if !coverQuery(st, QueryTerms(tt.query), nil, hits, tt.list) {
				t.Fatal("coverQuery changed nothing")
			}
			score := map[int]float64{}
			for _, h := range hits {
				score[h.ID] = h.Score
			}
			SortHits(hits)
			if hits[0].ID != tt.first {
				t.Errorf("first page = %d, want %d (%v)", hits[0].ID, tt.first, hits)
			}
			if got := score[anns] == score[bens]; got != tt.alike {
				t.Errorf("Ann's tennis %v, Ben's tennis %v: alike = %v, want %v", score[anns], score[bens], got, tt.alike)
			}
		})
	}
}

// TestListRelevantCountsSpeakersMembers checks that the relevance floor of
// a list question counts a member the asked-about speaker names as the
// category word (memberWords), as the ranking does: the page where Ann
// names tennis is shown for "What sports does Ann enjoy?" and not when the
// question is not taken for a list.
func TestListRelevantCountsSpeakersMembers(t *testing.T) {
	st := sittingPages(t,
		[][2]string{{"Ann: I enjoy sport on TV.", "Ben: Same."}},
		[][2]string{{"Ann: Tennis on Sunday again.", "Ben: Good luck."}},
		[][2]string{{"Ben: Weather is grey.", "Ann: Yes."}},
		[][2]string{{"Ben: Rain again.", "Ann: Yes."}},
	)
	qterms := FloorTerms("What sports does Ann enjoy?")
	for _, list := range []bool{true, false} {
		hits := []lexical.Hit{{ID: 0, Score: 1}, {ID: 1, Score: 0.9}}
		got := Relevant(st, qterms, hits, list)
		if !got[0] || got[1] != list {
			t.Errorf("list %v: Relevant = %v, want [true %v]", list, got, list)
		}
	}
}
