package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// keywordsRetrieve is the part of retrieve_memory's result these tests
// read: which of the host's words found each page and fact.
type keywordsRetrieve struct {
	Pages []struct {
		ID              string   `json:"id"`
		User            string   `json:"user_input"`
		MatchedKeywords []string `json:"matched_keywords"`
	} `json:"pages"`
	Facts []struct {
		Content         string   `json:"content"`
		Standing        bool     `json:"standing"`
		MatchedKeywords []string `json:"matched_keywords"`
	} `json:"facts"`
	Injection string `json:"injection"`
}

// e2eAdd stores exchanges (user, reply pairs) in the thread and returns
// their turn ids.
func e2eAdd(ctx context.Context, t *testing.T, srv *mnemoProc, thread string, pairs ...[2]string) []string {
	t.Helper()
	var ids []string
	for i, p := range pairs {
		var res addResult
		if err := srv.tool(ctx, "add_memory", map[string]any{
			"user_input": p[0], "agent_response": p[1], "thread_id": thread,
			"timestamp": "2026-10-" + []string{"01", "03", "05", "08", "11", "14", "17", "20", "23", "26"}[i%10] + "T18:00:00Z",
		}, &res); err != nil || len(res.TurnIDs) != 1 {
			t.Fatalf("add_memory(%q) = %+v, %v", p[0], res, err)
		}
		ids = append(ids, res.TurnIDs[0])
	}
	return ids
}

// e2eSave saves facts through save_memory, as a host does when the user
// says "remember that …".
func e2eSave(ctx context.Context, t *testing.T, srv *mnemoProc, facts ...string) {
	t.Helper()
	for _, f := range facts {
		var res struct {
			Fact struct{ ID string } `json:"fact"`
		}
		if err := srv.tool(ctx, "save_memory", map[string]any{"content": f, "category": "preference"}, &res); err != nil || res.Fact.ID == "" {
			t.Fatalf("save_memory(%q) = %+v, %v", f, res, err)
		}
	}
}

func e2eRetrieve(ctx context.Context, t *testing.T, srv *mnemoProc, query string, keywords ...string) keywordsRetrieve {
	t.Helper()
	args := map[string]any{"query": query}
	if len(keywords) > 0 {
		args["keywords"] = keywords
	}
	var got keywordsRetrieve
	if err := srv.tool(ctx, "retrieve_memory", args, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// injectedFacts returns the facts of want that the injection text holds.
func injectedFacts(injection string, facts []string) []string {
	var out []string
	for _, f := range facts {
		if strings.Contains(injection, f) {
			out = append(out, f)
		}
	}
	return out
}

var dinnerFacts = []string{
	"Is vegetarian and eats no fish",
	"Is allergic to peanuts",
	"Likes spicy food",
	"Works as a data engineer in Rotterdam",
	"Has a cat named Miso",
	"Plays the cello on weekends",
	"Drives a 2019 Skoda Octavia",
	"Prefers window seats on flights",
	"Supports Feyenoord",
	"Is learning Portuguese",
}

// TestE2EDinnerQuestion asks the real server what to cook, as a person
// would, with no model configured: the diet and the allergy come with the
// answer whatever the words (standing facts), and with the host's keywords
// the exchanges that say them come too; facts about other things stay out.
func TestE2EDinnerQuestion(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := startServer(t, t.TempDir())
	srv.initialize(ctx)
	e2eSave(ctx, t, srv, dinnerFacts...)
	ids := e2eAdd(ctx, t, srv, "life",
		[2]string{"I'm vegetarian, so no fish either.", "Got it: vegetarian, no fish."},
		[2]string{"Peanuts make me break out, I'm allergic.", "Noted, I'll keep peanuts out of suggestions."},
		[2]string{"The build job on CI keeps timing out.", "Start with the build job's cache settings."},
		[2]string{"Which cello strings last longest?", "Steel-core strings last longest for weekend playing."},
	)
	unrelated := dinnerFacts[3:]

	plain := e2eRetrieve(ctx, t, srv, "What should I cook for dinner tonight?")
	if got := injectedFacts(plain.Injection, dinnerFacts[:2]); len(got) != 2 {
		t.Errorf("without keywords the injection holds %q of the diet and allergy facts, want both (standing):\n%s", got, plain.Injection)
	}
	if got := injectedFacts(plain.Injection, unrelated); len(got) > 0 {
		t.Errorf("without keywords the injection holds unrelated facts %q:\n%s", got, plain.Injection)
	}
	for _, f := range plain.Facts {
		if strings.Contains(f.Content, "peanuts") && !f.Standing {
			t.Errorf("fact %q has standing false, want true: it entered for every question", f.Content)
		}
	}

	kw := e2eRetrieve(ctx, t, srv, "What should I cook for dinner tonight?", "food", "vegetarian", "allergic", "peanuts", "spicy")
	if got := injectedFacts(kw.Injection, dinnerFacts[:3]); len(got) != 3 {
		t.Errorf("with keywords the injection holds %q of the diet, allergy and taste facts, want all three:\n%s", got, kw.Injection)
	}
	for _, s := range []string{"I'm vegetarian, so no fish either.", "Peanuts make me break out, I'm allergic."} {
		if !strings.Contains(kw.Injection, s) {
			t.Errorf("with keywords the injection lacks the exchange %q:\n%s", s, kw.Injection)
		}
	}
	if got := injectedFacts(kw.Injection, unrelated); len(got) > 0 {
		t.Errorf("with keywords the injection holds unrelated facts %q:\n%s", got, kw.Injection)
	}
	if strings.Contains(kw.Injection, "build job") {
		t.Errorf("with keywords the injection holds the CI exchange:\n%s", kw.Injection)
	}
	for _, p := range kw.Pages {
		if p.ID == ids[1] && !slices.Contains(p.MatchedKeywords, "peanuts") {
			t.Errorf("the peanut exchange's matched_keywords = %q, want peanuts among them", p.MatchedKeywords)
		}
	}
	for _, f := range kw.Facts {
		if f.Content == "Likes spicy food" && !slices.Equal(f.MatchedKeywords, []string{"food", "spicy"}) {
			t.Errorf("fact %q matched_keywords = %q, want [food spicy]", f.Content, f.MatchedKeywords)
		}
	}
	srv.stop()
}

// TestE2EKeywordOutvotesStrayWord: the host says the Japan holiday is the
// Tokyo trip; the question's weak word "start" must not bring the CI
// exchange ahead of it.
func TestE2EKeywordOutvotesStrayWord(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := startServer(t, t.TempDir())
	srv.initialize(ctx)
	ids := e2eAdd(ctx, t, srv, "misc",
		[2]string{"Our CI pipeline fails on every push.", "Start with the build job: its cache key is wrong."},
		[2]string{"I booked flights to Tokyo for 14 March, two weeks with my sister.", "Lovely: two weeks in Tokyo from 14 March."},
		[2]string{"Can you suggest a good running route near the river?", "The river loop is 8 km and flat."},
		[2]string{"When should I start the sourdough starter?", "Feed the starter two days before baking."},
	)
	got := e2eRetrieve(ctx, t, srv, "When does my Japan holiday start?", "Tokyo")
	if len(got.Pages) == 0 || got.Pages[0].ID != ids[1] {
		t.Fatalf("pages = %+v, want the Tokyo exchange %s first", got.Pages, ids[1])
	}
	if !slices.Equal(got.Pages[0].MatchedKeywords, []string{"Tokyo"}) {
		t.Errorf("the Tokyo exchange's matched_keywords = %q, want [Tokyo]", got.Pages[0].MatchedKeywords)
	}
	if !strings.Contains(got.Injection, "Tokyo for 14 March") {
		t.Errorf("injection lacks the Tokyo exchange:\n%s", got.Injection)
	}
	srv.stop()
}

// TestE2EFortyFactsFocused: with 40 facts saved, a focused question with
// keywords injects the facts it is about and at most a handful of others
// (the standing ones among them).
func TestE2EFortyFactsFocused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := startServer(t, t.TempDir())
	srv.initialize(ctx)
	facts := []string{
		"Prefers Go for backend services", "Writes frontend code in TypeScript", "Uses Neovim as editor",
		"Deploys to Kubernetes on Hetzner", "Runs PostgreSQL 15 in production", "Reviews pull requests every morning",
		"Has a daughter named Mia", "Lives in Utrecht", "Was born in Porto", "Has two brothers",
		"Plays padel on Tuesdays", "Runs half marathons", "Climbs indoors in winter", "Swims in the sea in summer",
		"Reads science fiction", "Likes Ursula Le Guin", "Listens to jazz while working", "Plays the piano badly",
		"Drinks oat milk flat whites", "Bakes sourdough bread", "Grows tomatoes on the balcony", "Owns a vintage Vespa",
		"Travels to Japan every spring", "Speaks Dutch and Portuguese", "Is learning Japanese", "Collects fountain pens",
		"Volunteers at a food bank", "Prefers trains over planes in Europe", "Saves for a house deposit", "Banks with ING",
		"Is allergic to penicillin", "Is vegetarian", "Wears glasses for reading", "Goes to bed before eleven",
		"Meditates ten minutes a day", "Watches Formula 1", "Supports PSV Eindhoven", "Has a cat named Miso",
		"Wants to learn sailing", "Prefers dark mode everywhere",
	}
	e2eSave(ctx, t, srv, facts...)
	got := e2eRetrieve(ctx, t, srv, "Which language should I use for the new backend service?", "programming language", "Go", "backend", "server", "API")
	if !strings.Contains(got.Injection, "Prefers Go for backend services") {
		t.Errorf("injection lacks the Go fact:\n%s", got.Injection)
	}
	related := map[string]bool{"Prefers Go for backend services": true, "Writes frontend code in TypeScript": true, "Deploys to Kubernetes on Hetzner": true}
	var others []string
	for _, f := range injectedFacts(got.Injection, facts) {
		if !related[f] {
			others = append(others, f)
		}
	}
	if len(others) > 4 {
		t.Errorf("injection holds %d unrelated facts %q, want at most a handful (the standing ones):\n%s", len(others), others, got.Injection)
	}
	srv.stop()
}
