package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
)

// Corrections and forgetting a person can trust (issue 40), in Chromium
// through HAProxy in front of the real binary, with no language model
// (the default), on the file store and on PostgreSQL: a correction made
// in the viewer is what retrieve_memory gives, dated by the correction
// and never only the stale exchange; forgetting a thread lists the
// profile section the host wrote that still names it; forgetting a fact
// lists the exchange that says it; forgetting a topic removes exactly the
// items its preview listed. Every page is checked with axe-core at 1280
// and 375 px.
func TestUIBrowserTrust(t *testing.T) {
	t.Parallel()
	haproxyPath(t)
	chromiumPath(t)
	axe := axeScript(t)
	for _, store := range []string{"files", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var env []string
			if store == "postgres" {
				env = append(env, "MNEMO_STORAGE="+pgtest.NewDatabase(t))
			}
			trustTasks(t, env, axe)
		})
	}
}

func trustTasks(t *testing.T, env []string, axe string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lbAddr := freeAddr(t)
	lb := "http://" + lbAddr
	env = append(env, "MNEMO_HTTP_PUBLIC_URL="+lb+"/mcp")
	dir := t.TempDir()
	out, err := mnemoCmd(t, dir, env, "token", "add", "--user", "ana").Output()
	if err != nil {
		t.Fatalf("mnemo token add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	srv := startHTTP(t, dir, env)
	startBalancer(t, ctx, lbAddr, strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/mcp"))
	mc := mcpClient(t, lb+"/mcp", map[string]string{"Authorization": "Bearer " + token})

	// What the assistant stored, with no model: exchanges, the facts it
	// saved, and the personal section it wrote with update_profile.
	for _, ex := range [][3]string{
		{"dinner", "I'm vegetarian, can you suggest a dinner with lentils?", "A lentil dal with rice and spinach."},
		{"trip-lisbon", "We fly to Lisbon on Friday to see my sister Marguerite.", "Enjoy Lisbon and the trams!"},
		{"trip-lisbon", "Which neighbourhood should we stay in?", "Alfama is close to her and full of fado bars."},
		{"lisbon-food", "Where can I eat bacalhau in Lisbon?", "Try a tasca near the Rossio."},
		{"tokyo", "We booked the Tokyo trip for cherry blossom season.", "Wonderful, book the ryokan early."},
		{"work", "Our Go service leaks goroutines when clients disconnect.", "Pass the request context down."},
	} {
		httpTool(t, mc, "add_memory", map[string]any{"thread_id": ex[0], "user_input": ex[1], "agent_response": ex[2]}, nil)
	}
	saved := map[string]string{}
	for _, f := range []struct{ content, category string }{
		{"Alice is vegetarian.", "preference"},
		{"Planning a Tokyo trip for cherry blossom season", "goal"},
		{"Visits Lisbon every spring", "context"},
		{"Prefers metric units", "preference"},
	} {
		var res memory.SaveFactResult
		httpTool(t, mc, "save_memory", map[string]any{"content": f.content, "category": f.category}, &res)
		saved[f.content] = res.Fact.ID
	}
	httpTool(t, mc, "update_profile", map[string]any{"section": "personal_context", "text": "Sister Marguerite lives in Alfama, Lisbon."}, nil)
	httpTool(t, mc, "update_profile", map[string]any{"section": "work_context", "text": "Runs a Go service."}, nil)

	b := browser(t, ctx)
	p := &page{t: t, ctx: ctx, b: b}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	shots := screenshotDir(t)
	check := func(name string) {
		t.Helper()
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"375px", 375, 800}} {
			p.do("viewport", chromedp.EmulateViewport(size.w, size.h))
			if axe != "" {
				checkAxe(t, b, axe, name+" at "+size.name)
			}
			if size.w == 375 && eval(`String(document.documentElement.scrollWidth > window.innerWidth + 1)`) == "true" {
				t.Errorf("%s scrolls sideways at 375 px", name)
			}
			png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shots, "trust-"+name+"-"+size.name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p.do("viewport", chromedp.EmulateViewport(1280, 900))
	}
	acceptConfirms := chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`)
	retrieve := func(q string) string {
		t.Helper()
		var res memory.RetrieveResult
		httpTool(t, mc, "retrieve_memory", map[string]any{"query": q}, &res)
		return res.Injection
	}
	base := lb + "/ui"
	p.do("viewport", chromedp.EmulateViewport(1280, 900))
	p.login(lb, token)
	check("start")

	// A correction in the viewer is what the assistant reads.
	veg := saved["Alice is vegetarian."]
	p.do("facts", chromedp.Navigate(base+"/facts"))
	p.waitText("facts", "Alice is vegetarian.")
	p.do("correct", chromedp.Click(chromedp.CSS("#edit-"+veg)),
		chromedp.SetValue(chromedp.CSS("#c-"+veg), "Alice is pescatarian: she eats fish since November 2026."),
		chromedp.Click(chromedp.CSS("#save-"+veg)))
	p.waitText("corrected", "The fact is updated.")
	// The script that puts the focus back runs once the page has loaded.
	focused := `document.readyState === "complete" && !!document.activeElement && document.activeElement.id === "edit-` + veg + `"`
	if _, err := chromedp.Run(b, chromedp.Poll[bool](focused, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Errorf("after the save the focus is on %q, want the edited fact's control edit-%s", eval(`document.activeElement ? document.activeElement.id : ""`), veg)
	}
	check("facts")
	inj := retrieve("Am I vegetarian?")
	var correction string
	for l := range strings.Lines(inj) {
		if strings.Contains(l, "pescatarian") {
			correction = l
		}
		if strings.Contains(l, "I'm vegetarian") && !strings.Contains(l, "superseded") {
			t.Errorf("retrieve_memory gives the stale exchange as it was: %q\n%s", l, inj)
		}
	}
	if correction == "" || strings.Contains(correction, "earlier") {
		t.Errorf("retrieve_memory for \"Am I vegetarian?\" shows the correction as %q, want it shown and not earlier:\n%s", correction, inj)
	}

	// The history tells who changed what the assistant reads, with a way
	// back: the correction can be undone, the section shows its writer.
	p.do("fact history", chromedp.Navigate(base+"/history?fact="+veg))
	p.waitText("fact history", "by you, in the memory viewer")
	if got := eval(`document.getElementById("undo-` + veg + `") ? "yes" : "no"`); got != "yes" {
		t.Errorf("the corrected fact's history has no Undo button:\n%s", p.text())
	}
	check("fact-history")
	p.do("section history", chromedp.Navigate(base+"/history?section=personal_context"))
	p.waitText("section history", "by the assistant, through a tool call")
	if !strings.Contains(p.text(), "Sister Marguerite lives in Alfama, Lisbon.") {
		t.Errorf("the section's history does not show what was written:\n%s", p.text())
	}
	var sh memory.HistoryResult
	httpTool(t, mc, "memory_history", map[string]any{"section": "personal_context"}, &sh)
	if len(sh.SectionEvents) != 1 || sh.SectionEvents[0].Actor != memory.ActorAssistant {
		t.Errorf("memory_history for the section = %+v, want the assistant's edit", sh.SectionEvents)
	}

	// Forgetting the Lisbon thread names the section the host wrote.
	p.do("lisbon thread", chromedp.Navigate(base+"/exchanges?thread=trip-lisbon"))
	p.waitText("thread listed", "Which neighbourhood")
	p.do("forget thread", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-thread")))
	p.waitText("thread forgotten", "What may still mention it")
	check("forget-thread")
	res := p.text()
	for _, want := range []string{"Sister Marguerite lives in Alfama, Lisbon.", "Lisbon"} {
		if !strings.Contains(res, want) {
			t.Errorf("the forget result does not show %q:\n%s", want, res)
		}
	}
	if strings.Contains(res, "Nothing else") {
		t.Errorf("the forget result says nothing else mentions it:\n%s", res)
	}

	// Forgetting a fact names the exchange that says it.
	tokyo := saved["Planning a Tokyo trip for cherry blossom season"]
	p.do("tokyo fact", chromedp.Navigate(base+"/facts?text=Tokyo"))
	p.waitText("tokyo listed", "Planning a Tokyo trip")
	p.do("forget fact", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-"+tokyo)))
	p.waitText("fact forgotten", "What may still mention it")
	if res := p.text(); !strings.Contains(res, "We booked the Tokyo trip for cherry blossom season.") {
		t.Errorf("the forget of the fact does not name the exchange that says it:\n%s", res)
	}

	// Forget everything about Lisbon: exactly what the preview listed.
	var before memory.ListResult
	httpTool(t, mc, "list_memories", map[string]any{"kind": "turns", "limit": 100}, &before)
	var factsBefore memory.ListResult
	httpTool(t, mc, "list_memories", map[string]any{"limit": 100}, &factsBefore)
	p.do("topic", chromedp.Navigate(base+"/topic"))
	p.waitText("topic page", "Word or name")
	p.do("search topic", chromedp.SetValue(chromedp.CSS("#topic-q"), "Lisbon"), chromedp.Click(chromedp.CSS("form[aria-label='Find a topic'] button[type=submit]")))
	p.waitText("preview", "mention “Lisbon”")
	check("topic-preview")
	picked := strings.Split(eval(`Array.from(document.querySelectorAll("main input[type=checkbox]:checked")).map(c => c.name + ":" + c.value).join(",")`), ",")
	slices.Sort(picked)
	wantPicked := []string{"fact:" + saved["Visits Lisbon every spring"], "section:personal_context"}
	for _, tr := range before.Turns {
		if strings.Contains(tr.User+tr.Reply, "Lisbon") {
			wantPicked = append(wantPicked, "turn:"+tr.ID)
		}
	}
	slices.Sort(wantPicked)
	if !slices.Equal(picked, wantPicked) {
		t.Errorf("the preview lists %v, want %v", picked, wantPicked)
	}
	p.do("forget topic", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-topic")))
	p.waitText("topic forgotten", "Forgotten: what you chose about Lisbon")
	check("topic-forgotten")
	var after, factsAfter memory.ListResult
	httpTool(t, mc, "list_memories", map[string]any{"kind": "turns", "limit": 100}, &after)
	httpTool(t, mc, "list_memories", map[string]any{"limit": 100}, &factsAfter)
	nTurns := 0
	for _, s := range picked {
		if strings.HasPrefix(s, "turn:") {
			nTurns++
		}
	}
	if after.Total != before.Total-nTurns || factsAfter.Total != factsBefore.Total-1 {
		t.Errorf("after the topic forget %d exchanges and %d facts are left, want %d and %d (only the previewed ones went)",
			after.Total, factsAfter.Total, before.Total-nTurns, factsBefore.Total-1)
	}
	if inj := retrieve("Lisbon"); strings.Contains(inj, "Lisbon") {
		t.Errorf("after forgetting Lisbon retrieve_memory still mentions it:\n%s", inj)
	}
	if inj := retrieve("Where does my sister live?"); strings.Contains(inj, "Lisbon") || strings.Contains(inj, "Alfama") {
		t.Errorf("after forgetting Lisbon retrieve_memory still mentions it:\n%s", inj)
	}
	var prof memory.ProfileResult
	httpTool(t, mc, "get_user_profile", nil, &prof)
	if prof.User.WorkContext.Summary != "Runs a Go service." || prof.User.PersonalContext.Summary != "" {
		t.Errorf("after the topic forget the profile is %+v, want only the personal section cleared", prof.User)
	}

	for _, pg := range []struct{ name, path string }{
		{"history", "/history"}, {"developers", "/developers"}, {"start-after", "/"}, {"facts-after", "/facts"},
	} {
		p.do(pg.name, chromedp.Navigate(base+pg.path))
		p.waitText(pg.name, "Log out")
		check(pg.name)
	}
}
