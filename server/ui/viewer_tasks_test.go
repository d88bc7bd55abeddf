package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A profile section is edited and cleared through UpdateProfile; a
// refused edit shows the form again with what was typed.
func TestSectionActions(t *testing.T) {
	f := newFixture(t)
	f.seed()
	w := f.post("/profile/section", url.Values{"user": {"ana"}, "section": {"top_of_mind"}, "text": {"Preparing the boat for the Azores."}, "back": {"/?user=ana"}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/?done=section-saved&user=ana#edit-section-top_of_mind" {
		t.Fatalf("save section = %d %q, want 303 back to the start page, at the section's edit control", w.Code, w.Header().Get("Location"))
	}
	p, _ := f.svc.Profile(t.Context(), memory.ProfileRequest{UserID: "ana"})
	if p.User.TopOfMind.Summary != "Preparing the boat for the Azores." {
		t.Errorf("top of mind = %q after the edit", p.User.TopOfMind.Summary)
	}
	if w := f.post("/profile/section", url.Values{"user": {"ana"}, "section": {"work_context"}, "op": {"clear"}, "text": {"ignored"}}); w.Code != http.StatusSeeOther ||
		!strings.Contains(w.Header().Get("Location"), "done=section-cleared") {
		t.Fatalf("clear section = %d %q", w.Code, w.Header().Get("Location"))
	}
	p, _ = f.svc.Profile(t.Context(), memory.ProfileRequest{UserID: "ana"})
	if p.User.WorkContext.Summary != "" {
		t.Errorf("work context = %q after clearing", p.User.WorkContext.Summary)
	}
	long := strings.Repeat("Sails every weekend out of Cascais. ", memory.MaxSectionRunes/30)
	w = f.post("/profile/section", url.Values{"user": {"ana"}, "section": {"top_of_mind"}, "text": {long}})
	if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, "keep a section under") ||
		!strings.Contains(body, `name="section" value="top_of_mind"`) || !strings.Contains(body, strings.TrimSpace(long)) {
		t.Errorf("refused section edit = %d, want 400 with the form holding the text; body:\n%s", w.Code, body)
	}
	if w := f.post("/profile/section", url.Values{"user": {"ana"}, "section": {"mood"}, "text": {"x"}}); w.Code != http.StatusBadRequest {
		t.Errorf("unknown section = %d, want 400", w.Code)
	}
	if body := f.get("/?user=ana").Body.String(); !strings.Contains(body, `aria-label="Edit profile section: Top of mind"`) || !strings.Contains(body, "Preparing the boat") {
		t.Errorf("the start page does not offer the section edit:\n%s", body)
	}
}

// An action goes back to the page its form came from, filters and page
// kept; a "back" that leaves the viewer is ignored.
func TestActionKeepsFilters(t *testing.T) {
	f := newFixture(t)
	f.seed()
	facts, _ := f.svc.List(t.Context(), memory.ListRequest{UserID: "ana", Text: "Azores"})
	id := facts.Facts[0].ID
	page := f.get("/facts?user=ana&text=Azores&category=goal").Body.String()
	if !strings.Contains(page, `name="back" value="/facts?category=goal&amp;text=Azores&amp;user=ana"`) {
		t.Fatalf("the facts page's forms do not carry their page:\n%s", page)
	}
	for _, tc := range []struct{ back, want string }{
		{"/facts?category=goal&text=Azores&user=ana", "/facts?category=goal&done=fact-updated&text=Azores&user=ana"},
		{"https://evil.example/facts", "/?done=fact-unchanged&user=ana"},
		{"//evil.example/facts", "/?done=fact-unchanged&user=ana"},
	} {
		// The first edit changes the confidence; the others find it
		// changed already.
		w := f.post("/facts/edit", url.Values{"user": {"ana"}, "id": {id}, "confidence": {"0.5"}, "back": {tc.back}})
		if want := tc.want + "#edit-" + id; w.Code != http.StatusSeeOther || w.Header().Get("Location") != want {
			t.Errorf("edit with back %q = %d %q, want 303 to %q", tc.back, w.Code, w.Header().Get("Location"), want)
		}
	}
}

// Looking at the start page: corrections first, then the most confident
// facts, then the most recent, each with a named Forget.
func TestStartPage(t *testing.T) {
	f := newFixture(t)
	mustSave(t, f.svc, "ana", "Prefers Go for backend services", "preference")
	mustSave(t, f.svc, "ana", "Is not vegetarian; eats fish", "correction")
	for i := range 9 {
		if _, err := f.svc.SaveFact(t.Context(), memory.SaveFactRequest{UserID: "ana", Content: fmt.Sprintf("Visited island number %d", i), Confidence: 0.5}); err != nil {
			t.Fatal(err)
		}
	}
	body := f.get("/?user=ana").Body.String()
	corr, conf, rec := strings.Index(body, "Corrections you made"), strings.Index(body, "Most confident"), strings.Index(body, "Most recent")
	if corr < 0 || conf < corr || rec < conf {
		t.Fatalf("the start page's lists are not corrections, most confident, most recent:\n%s", body)
	}
	if i := strings.Index(body, "Is not vegetarian"); i < corr || i > conf {
		t.Errorf("the correction is not in its list")
	}
	if i := strings.Index(body, "Prefers Go for backend services"); i < conf || i > rec {
		t.Errorf("the most confident fact is not in its list")
	}
	if !strings.Contains(body, `aria-label="Forget fact: Prefers Go for backend services"`) || !strings.Contains(body, "see all 11 facts") && !strings.Contains(body, "See all 11 facts") {
		t.Errorf("the start page lacks named actions or the link to every fact:\n%s", body)
	}
}

// Every list that can grow has pages: the history, the timeline and the
// search.
func TestPagination(t *testing.T) {
	f := newFixture(t)
	for i := range 60 {
		mustAdd(t, f.svc, "ana", fmt.Sprintf("thread-%02d", i), fmt.Sprintf("Question %d about reefing the mainsail", i), "Reef early.")
		mustSave(t, f.svc, "ana", fmt.Sprintf("Owns spare part number %d", i), "context")
	}
	hist := f.get("/history?user=ana").Body.String()
	if !strings.Contains(hist, "Changes 1–50 of 60") || !strings.Contains(hist, "offset=50") {
		t.Errorf("history page 1 lacks its count or next page:\n%s", hist)
	}
	if hist := f.get("/history?user=ana&offset=50").Body.String(); !strings.Contains(hist, "Changes 51–60 of 60") || !strings.Contains(hist, "Owns spare part number 0") {
		t.Errorf("history page 2 does not show the oldest changes:\n%s", hist)
	}
	ex := f.get("/exchanges?user=ana").Body.String()
	if !strings.Contains(ex, "Threads 1–30 of 60") || !strings.Contains(ex, "toffset=30") {
		t.Errorf("the timeline lacks its count or next page:\n%s", ex)
	}
	if ex := f.get("/exchanges?user=ana&toffset=30").Body.String(); !strings.Contains(ex, "Threads 31–60 of 60") || strings.Count(ex, `<text class="label"`) != 30 {
		t.Errorf("timeline page 2 does not show the oldest threads:\n%s", ex)
	}
	s1 := f.get("/exchanges?user=ana&q=reefing+mainsail").Body.String()
	if !strings.Contains(s1, "More matches") || strings.Count(s1, `class="turn"`) != 20 {
		t.Errorf("search page 1 shows %d matches, want 20 and a next page", strings.Count(s1, `class="turn"`))
	}
	s2 := f.get("/exchanges?user=ana&q=reefing+mainsail&offset=20").Body.String()
	if !strings.Contains(s2, "Better matches") || strings.Count(s2, `class="turn"`) != 20 || !strings.Contains(s2, `start="21"`) {
		t.Errorf("search page 2 shows %d matches, want 20 numbered from 21", strings.Count(s2, `class="turn"`))
	}
}

// Forgetting a thread the updater had read answers with what went with
// it and the profile section that may still mention it, with its actions.
func TestForgetResult(t *testing.T) {
	f := newFixture(t)
	mustAdd(t, f.svc, "ana", "family", "I live with Rui and our daughter Inês.", "Noted.")
	mustAdd(t, f.svc, "ana", "home", "My cat is called Pixel", "Nice.")
	if _, err := f.store.UpdateDocument(t.Context(), memory.Scope{UserID: "ana"}, func(d *memory.Document) error {
		d.Watermarks = map[string]int64{"family": 1, "home": 2}
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_fam1", Content: "Lives with Rui and Inês", Category: "context", Confidence: 0.9, CreatedAt: testNow, Source: "family"},
			memory.Fact{ID: "fact_both", Content: "Has a family cat", Category: "context", Confidence: 0.9, CreatedAt: testNow, Source: "family", Sources: []string{"home"}})
		d.User.PersonalContext = memory.Section{Summary: "Lives with Rui and their daughter Inês.", UpdatedAt: testNow}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w := f.post("/threads/delete", url.Values{"user": {"ana"}, "thread": {"family"}})
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("forget thread = %d:\n%s", w.Code, body)
	}
	went, still := strings.Index(body, "What went with it"), strings.Index(body, "What may still mention it")
	for _, c := range []struct {
		text     string
		from, to int
	}{
		{"Lives with Rui and Inês", went, still},
		{"Lives with Rui and their daughter Inês.", still, len(body)},
		{`id="clear-section-personal_context"`, still, len(body)},
		{`aria-label="Forget fact: Has a family cat"`, still, len(body)},
	} {
		if i := strings.Index(body, c.text); i < c.from || i > c.to {
			t.Errorf("the forget result does not show %q in its place:\n%s", c.text, body)
		}
	}
}
