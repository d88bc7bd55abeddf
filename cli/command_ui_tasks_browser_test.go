package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/mark3labs/mcp-go/client"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// The viewer's tasks in a real browser, as a person does them: log in on
// /ui/login of "mnemo serve --http" with a token, then find, edit and
// forget a fact; forget a thread and clear the profile section it names;
// edit a profile section. Each change is checked through the MCP tools of
// the same server and in the data directory. Every page is checked with
// axe-core at desktop and phone widths and photographed.

// familyModel is the fake language model: an update whose conversation
// speaks of the family writes the personal section and a fact from it;
// any other prompt changes nothing.
func familyModel(t *testing.T) func(openaitest.ChatRequest) openaitest.Reply {
	return func(r openaitest.ChatRequest) openaitest.Reply {
		update := map[string]any{"user": map[string]any{}, "history": map[string]any{}, "newFacts": []any{}, "factsToRemove": []any{}}
		if strings.Contains(conversationBlock(r.Prompt()), "Inês") && strings.Contains(r.Prompt(), "newFacts") {
			update["user"] = map[string]any{"personalContext": map[string]any{"summary": "Lives in Lisbon with Rui and their daughter Inês.", "shouldUpdate": true}}
			update["newFacts"] = []any{map[string]any{"content": "Lives with Rui and their daughter Inês", "category": "context", "confidence": 0.9}}
		}
		return openaitest.Chat(t, openaitest.MustJSON(t, update), openaitest.Usage{PromptTokens: 100, CompletionTokens: 30})
	}
}

// httpTool calls a tool of the server and decodes its structured result.
func httpTool(t *testing.T, c *client.Client, name string, args map[string]any, out any) {
	t.Helper()
	res := callHTTPTool(t, c, name, args)
	if res.IsError {
		t.Fatalf("%s: %s", name, resultText(res))
	}
	if out == nil {
		return
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s result: %v", name, err)
	}
}

// diskDocument reads a user's memory document from the data directory.
func diskDocument(t *testing.T, dataDir, user string) memory.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "users", user, "memory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc memory.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// axeScript is axe-core's axe.min.js: $MNEMO_AXE_JS (.ci/axe.sh installs
// it). Without it the check is skipped locally and fails under CI=true.
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("MNEMO_AXE_JS")
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("MNEMO_AXE_JS: %v", err)
		}
		return string(data)
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("MNEMO_AXE_JS is not set; CI must install axe-core (export MNEMO_AXE_JS=$(.ci/axe.sh))")
	}
	t.Log("accessibility check skipped: set MNEMO_AXE_JS=$(.ci/axe.sh) (axe-core from npm) to run it")
	return ""
}

func TestUIBrowserTasks(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	axe := axeScript(t)
	shots := screenshotDir(t)
	dir := t.TempDir()
	llm := openaitest.NewServer(t)
	llm.ChatFunc = familyModel(t)
	out, err := mnemoCmd(t, dir, nil, "token", "add", "--user", "ana").Output()
	if err != nil {
		t.Fatalf("mnemo token add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	srv := startHTTP(t, dir, []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=sk-test", "MNEMO_LLM_MODEL=fake"})
	mc := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + token})
	base := strings.TrimSuffix(srv.url, "/mcp") + "/ui"

	// What the assistant stored: exchanges of three threads, facts it
	// saved, one of them a correction; the updater reads the family
	// thread into the personal section and a fact.
	for _, ex := range [][3]string{
		{"family", "I live in Lisbon with Rui and our daughter Inês.", "Noted: Lisbon, with Rui and Inês."},
		{"family", "Inês starts school in September.", "A big month for the family."},
		{"passage", "Should we reef before the squall line reaches us?", "Reef early: a second reef before dusk."},
		{"work", "Our Go service leaks goroutines when clients disconnect.", "Pass the request context down."},
	} {
		httpTool(t, mc, "add_memory", map[string]any{"thread_id": ex[0], "user_input": ex[1], "agent_response": ex[2]}, nil)
	}
	var flushed memory.FlushResult
	httpTool(t, mc, "flush_memory", nil, &flushed)
	saved := map[string]string{}
	for _, f := range []struct{ content, category string }{
		{"Keeps a logbook of every passage", "behavior"},
		{"Prefers metric units", "preference"},
		{"Sails a 34-foot sloop called Marlin", "context"},
		{"Is not vegetarian; eats fish", "correction"},
	} {
		var res memory.SaveFactResult
		httpTool(t, mc, "save_memory", map[string]any{"content": f.content, "category": f.category, "confidence": 0.8}, &res)
		saved[f.content] = res.Fact.ID
	}
	var prof memory.ProfileResult
	httpTool(t, mc, "get_user_profile", nil, &prof)
	if !strings.Contains(prof.User.PersonalContext.Summary, "Rui") {
		t.Fatalf("the updater did not write the personal section (flush: %+v); the test needs it", flushed)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := browser(t, ctx)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	text := func() string { return eval(`document.body ? document.body.innerText : ""`) }
	// waitFor waits until the page has loaded (its stylesheet applied: a
	// row measured before that is taller) and satisfies the predicate; a
	// page being left ends one poll, the next polls the new page. The
	// test's context is the only bound.
	waitFor := func(what, predicate string) {
		t.Helper()
		var last error
		loaded := `document.readyState === "complete" && (` + predicate + `)`
		for {
			ok, err := chromedp.Run(b, chromedp.Poll[bool](loaded, chromedp.WithPollingTimeout(0)))
			if err == nil && ok {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: the page never satisfied %s (%v)", what, predicate, last)
			}
			last = err
		}
	}
	waitText := func(what, s string) {
		t.Helper()
		q, _ := json.Marshal(s)
		waitFor(what, "!!document.body && document.readyState === 'complete' && document.body.innerText.includes("+string(q)+")")
	}
	acceptConfirms := chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`)
	// check checks the open page at both widths: no axe-core violation,
	// no sideways scroll at 375 px, and a screenshot (PNG) of each.
	check := func(name string) {
		t.Helper()
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"375px", 375, 800}} {
			do("viewport", chromedp.EmulateViewport(size.w, size.h))
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
			if err := os.WriteFile(filepath.Join(shots, name+"-"+size.name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		do("viewport", chromedp.EmulateViewport(1280, 900))
	}
	history := func(id string) memory.HistoryResult {
		t.Helper()
		var h memory.HistoryResult
		httpTool(t, mc, "memory_history", map[string]any{"fact_id": id}, &h)
		return h
	}

	// Log in through the form, as a person does.
	do("login page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/login"))
	check("login")
	do("log in", chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("button[type=submit]")))
	waitFor("logged in", `!!document.body && document.readyState === 'complete' && !location.pathname.endsWith("/login") || document.body.innerText.includes("forbidden")`)
	if strings.Contains(text(), "forbidden") {
		t.Fatalf("the login form's post is refused: %q", strings.TrimSpace(text()))
	}
	waitText("start page", "What your assistant believes")
	start := text()
	for _, want := range []string{"Corrections you made", "Is not vegetarian", "Most confident", "Lives with Rui", "Lives in Lisbon with Rui"} {
		if !strings.Contains(start, want) {
			t.Errorf("the start page does not show %q:\n%s", want, start)
		}
	}
	if !strings.Contains(start[:strings.Index(start, "Most confident")], "Is not vegetarian") {
		t.Errorf("the correction is not listed first:\n%s", start)
	}

	// The user switcher stays on the page with an arrow key.
	loc := eval(`location.href`)
	do("arrow on the switcher", chromedp.Evaluate[chromedp.Void](`document.getElementById("scope").focus()`), chromedp.KeyEvent(kb.ArrowDown))
	if got := eval(`location.href`); got != loc {
		t.Errorf("an arrow key on the user switcher left the page: %s → %s", loc, got)
	}

	// Task 1: find a fact, edit it, forget it; the filter stays.
	id := saved["Keeps a logbook of every passage"]
	do("facts", chromedp.Navigate(base+"/facts"), chromedp.SetValue(chromedp.CSS("input[name=text]"), "logbook"),
		chromedp.Click(chromedp.CSS("form[aria-label='Filter facts'] button[type=submit]")))
	waitFor("found", `!!document.getElementById("`+id+`") && location.search.includes("text=logbook")`)
	if n := eval(`String(document.querySelectorAll("main .fact-row").length)`); n != "1" {
		t.Errorf("the filter shows %s facts, want 1", n)
	}
	// A fact is one compact row, its actions beside it.
	if h, _ := strconv.Atoi(eval(`String(Math.round(document.getElementById("` + id + `").getBoundingClientRect().height))`)); h == 0 || h >= 100 {
		t.Errorf("a fact row is %d px tall at 1280 px, want under 100", h)
	} else {
		t.Logf("a fact row is %d px tall at 1280 px", h)
	}
	if got := eval(`document.getElementById("forget-` + id + `").getAttribute("aria-label")`); got != "Forget fact: Keeps a logbook of every passage" {
		t.Errorf("the Forget button's accessible name = %q", got)
	}
	// A refused edit (it would duplicate another fact) keeps what was
	// typed.
	long := "Prefers metric units"
	do("refused edit", chromedp.Click(chromedp.CSS("#edit-"+id)), chromedp.SetValue(chromedp.CSS("#c-"+id), long), chromedp.Click(chromedp.CSS("#save-"+id)))
	waitText("refused", "Not changed")
	check("refused-edit")
	if got := eval(`document.getElementById("retry-content").value`); got != long {
		t.Errorf("after a refused edit the form holds %q, want what was typed", got)
	}
	do("edit", chromedp.SetValue(chromedp.CSS("#retry-content"), "Keeps a paper logbook of every passage"),
		chromedp.Click(chromedp.CSS("form[aria-label='Try again'] button[type=submit]")))
	waitText("edited", "The fact is updated.")
	if got := eval(`location.search`); !strings.Contains(got, "text=logbook") {
		t.Errorf("after the edit the page is %s, want the filtered list", got)
	}
	var list memory.ListResult
	httpTool(t, mc, "list_memories", map[string]any{"text": "logbook"}, &list)
	if list.Total != 1 || list.Facts[0].Content != "Keeps a paper logbook of every passage" {
		t.Errorf("after the edit list_memories = %+v", list.Facts)
	}
	if h := history(id); len(h.Events) != 2 || h.Events[0].Actor != memory.ActorAssistant || h.Events[1].Actor != memory.ActorViewer {
		t.Errorf("memory_history after the edit = %+v, want created by the assistant, updated in the viewer", h.Events)
	}
	do("history page", chromedp.Navigate(base+"/history?fact="+id))
	waitText("history in words", "by you, in the memory viewer")
	if !strings.Contains(text(), "by the assistant, through a tool call") {
		t.Errorf("the history page does not say the assistant created the fact:\n%s", text())
	}
	do("back to the filter", chromedp.Navigate(base+"/facts?text=logbook"))
	waitFor("listed", `!!document.getElementById("forget-`+id+`")`)
	do("forget", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-"+id)))
	waitText("forgotten", "What went with it")
	if !strings.Contains(text(), "Keeps a paper logbook of every passage") {
		t.Errorf("the forget result does not list the fact:\n%s", text())
	}
	httpTool(t, mc, "list_memories", map[string]any{"text": "logbook"}, &list)
	if list.Total != 0 {
		t.Errorf("after the forget list_memories = %+v", list.Facts)
	}
	for _, f := range diskDocument(t, dir, "ana").Facts {
		if f.ID == id {
			t.Errorf("after the forget memory.json still holds %+v", f)
		}
	}

	// Task 2: forget the family thread; the result names the fact that
	// went with it and the profile section that may still mention it;
	// clear that section from there.
	do("family thread", chromedp.Navigate(base+"/exchanges?thread=family"))
	waitText("family listed", "starts school in September")
	do("forget thread", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-thread")))
	waitText("thread forgotten", "What may still mention it")
	check("forget-thread-result")
	res := text()
	for _, want := range []string{"Forgotten: thread family", "Lives with Rui and their daughter Inês", "Personal", "Lives in Lisbon with Rui"} {
		if !strings.Contains(res, want) {
			t.Errorf("the forget result does not show %q:\n%s", want, res)
		}
	}
	do("clear section", acceptConfirms, chromedp.Click(chromedp.CSS("#clear-section-personal_context")))
	waitText("cleared", "The profile section is cleared.")
	httpTool(t, mc, "get_user_profile", nil, &prof)
	if prof.User.PersonalContext.Summary != "" {
		t.Errorf("after clearing get_user_profile personal_context = %q", prof.User.PersonalContext.Summary)
	}
	doc := diskDocument(t, dir, "ana")
	if doc.User.PersonalContext.Summary != "" {
		t.Errorf("after clearing memory.json personalContext = %q", doc.User.PersonalContext.Summary)
	}
	for _, f := range doc.Facts {
		if strings.Contains(f.Content, "Inês") {
			t.Errorf("memory.json still holds a fact of the forgotten thread: %+v", f)
		}
	}

	// Task 3: edit a profile section on the start page.
	do("start", chromedp.Navigate(base+"/"))
	waitFor("section", `!!document.getElementById("edit-section-work_context")`)
	do("edit section", chromedp.Click(chromedp.CSS("#edit-section-work_context")),
		chromedp.SetValue(chromedp.CSS("#t-work_context"), "Runs a Go service; fixing a goroutine leak."),
		chromedp.Click(chromedp.CSS("#save-section-work_context")))
	waitText("section saved", "The profile section is saved.")
	httpTool(t, mc, "get_user_profile", nil, &prof)
	if prof.User.WorkContext.Summary != "Runs a Go service; fixing a goroutine leak." {
		t.Errorf("after the edit get_user_profile work_context = %q", prof.User.WorkContext.Summary)
	}
	if got := diskDocument(t, dir, "ana").User.WorkContext.Summary; got != "Runs a Go service; fixing a goroutine leak." {
		t.Errorf("after the edit memory.json workContext = %q", got)
	}

	// Live refresh keeps the keyboard focus, and says so where it shows.
	keep := saved["Prefers metric units"]
	do("facts", chromedp.Navigate(base+"/facts"))
	waitFor("listed", `!!document.getElementById("forget-`+keep+`")`)
	do("focus", chromedp.Evaluate[chromedp.Void](`document.getElementById("forget-`+keep+`").focus()`))
	httpTool(t, mc, "save_memory", map[string]any{"content": "Moors in Cascais"}, nil)
	waitText("live", "Moors in Cascais")
	if got := eval(`document.activeElement ? document.activeElement.id : ""`); got != "forget-"+keep {
		t.Errorf("after a live refresh the focus is on %q, want forget-%s", got, keep)
	}
	if visible := eval(`(() => { const r = document.getElementById("live").getBoundingClientRect(); return String(r.height > 0 && r.top >= 0 && r.top < innerHeight) })()`); visible != "true" {
		t.Errorf("the changed-elsewhere notice is not in view")
	}

	// Every page at both widths: no axe violation, no sideways scroll, a
	// screenshot.
	pages := []struct{ name, path string }{
		{"start", "/"}, {"facts", "/facts"}, {"exchanges", "/exchanges"}, {"exchanges-search", "/exchanges?q=reef+squall"},
		{"sessions", "/sessions"}, {"history", "/history"}, {"preview", "/preview?q=should+we+reef"},
		{"status", "/status"}, {"data", "/data"},
	}
	for _, p := range pages {
		do(p.name, chromedp.Navigate(base+p.path))
		waitFor(p.name, `document.readyState === "complete" && !!document.querySelector("main h1")`)
		check(p.name)
	}
	t.Logf("screenshots in %s", shots)
}

// checkAxe runs axe-core on the open page and reports every violation.
func checkAxe(t *testing.T, b context.Context, script, what string) {
	t.Helper()
	if _, err := chromedp.Run(b, chromedp.Evaluate[chromedp.Void](script+"\n;undefined")); err != nil {
		t.Fatalf("inject axe-core on %s: %v", what, err)
	}
	type violation struct {
		ID    string `json:"id"`
		Help  string `json:"help"`
		Nodes []struct {
			Target []any `json:"target"`
		} `json:"nodes"`
	}
	vs, err := chromedp.Run(b, chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core on %s: %v", what, err)
	}
	for _, v := range vs {
		var targets []string
		for _, n := range v.Nodes {
			b, _ := json.Marshal(n.Target)
			targets = append(targets, string(b))
		}
		t.Errorf("axe-core on %s: %s (%s) at %s", what, v.ID, v.Help, strings.Join(targets, ", "))
	}
}
