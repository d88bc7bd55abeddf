package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
)

// The memory viewer in a real browser: Debian's Chromium, headless,
// driven through the DevTools protocol by chromedp. The memory is
// written by a real "mnemo serve" process through its MCP tools; the
// viewer ("mnemo ui", in-process) shows it, changes it, and every change
// is checked through the MCP tools and on disk.

// chromiumPath finds the browser; without one the test skips locally and
// fails under CI=true.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testutil.SkipMissing(t, "Chromium", "no chromium, chromium-browser or google-chrome on PATH", "install Chromium (apt-get install -y chromium)")
	return ""
}

// screenshotDir is where the test writes its screenshots: $MNEMO_UI_SCREENSHOTS
// or a temporary directory.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MNEMO_UI_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless Chromium with a fresh profile.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	alloc, cancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // the test may run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	return bctx
}

// mcpFacts lists a user's facts through the MCP tools of srv.
func mcpList(t *testing.T, ctx context.Context, srv *mnemoProc, args map[string]any) memory.ListResult {
	t.Helper()
	var res memory.ListResult
	if err := srv.tool(ctx, "list_memories", args, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// diskFacts reads the facts of a user's memory document from the data
// directory.
func diskFacts(t *testing.T, dataDir, user string) []memory.Fact {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "users", user, "memory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc memory.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Facts
}

func TestUIBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	shots := screenshotDir(t)
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	ctx, cancel := context.WithCancel(t.Context()) // go test -timeout is the bound
	defer cancel()
	srv.initialize(ctx)
	add := func(user, thread, in, out string) {
		t.Helper()
		var res addResult
		if err := srv.tool(ctx, "add_memory", map[string]any{"user_id": user, "thread_id": thread, "user_input": in, "agent_response": out}, &res); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 14 {
		add("ana", "passage", fmt.Sprintf("Day %d of the passage to the Azores: the wind backs to the south-west, should we reef?", i+1),
			"Reef early: a second reef before dusk keeps the night watch easy.")
	}
	add("ana", "work", "Our Go service leaks goroutines when clients disconnect.", "Pass the request context down and select on ctx.Done().")
	add("ana", "trip", "Which marina in Horta takes visiting yachts?", "The Horta marina; call ahead on channel 10.")
	add("ana", "trip", "And fuel?", "At the fuel dock by the marina office.")

	v := startViewer(t, dataDir, "--user", "ana")
	b := browser(t, ctx)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func() string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// waitText waits until the page shows s (a page being left ends a
	// poll; the next one polls the new page). The test's context is the
	// only bound: each poll's time-out only starts the next poll.
	waitText := func(what, s string) {
		t.Helper()
		q, _ := json.Marshal(s)
		var err error
		for ctx.Err() == nil {
			if _, err = chromedp.Run(b, chromedp.Poll[bool]("!!document.body && document.body.innerText.includes("+string(q)+")", chromedp.WithPollingTimeout(20*time.Second))); err == nil {
				return
			}
			if ctx.Err() != nil {
				break
			}
		}
		t.Fatalf("%s: the page never showed %q: %v; it shows:\n%s", what, s, err, text())
	}
	acceptConfirms := chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`)

	// Without the link's token: refused, with a hint.
	do("open without token", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(v.base+"/facts"))
	if got := text(); !strings.Contains(got, "Unauthorized") || !strings.Contains(got, "Open the link") {
		t.Fatalf("without the token the viewer shows:\n%s", got)
	}
	// The link logs in and leaves no token in the address bar.
	do("log in", chromedp.Navigate(v.url))
	loc, _ := chromedp.Run(b, chromedp.Location())
	if strings.Contains(loc, "token") || !strings.Contains(text(), "What your assistant believes") {
		t.Fatalf("after login the browser is at %s showing:\n%s", loc, text())
	}

	// A fact saved through the MCP tools of the running server shows up
	// on the open facts page without a reload.
	do("facts page", chromedp.Navigate(v.base+"/facts?user=ana"))
	waitText("empty facts", "Nothing remembered yet")
	var saved memory.SaveFactResult
	if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "ana", "content": "Keeps a logbook of every passage", "category": "behavior"}, &saved); err != nil {
		t.Fatal(err)
	}
	id := saved.Fact.ID
	waitText("live fact", "Keeps a logbook of every passage")

	// Edit it.
	do("edit", acceptConfirms,
		chromedp.Click(chromedp.CSS("#"+id+" details.edit summary")),
		chromedp.SetValue(chromedp.CSS("#c-"+id), "Keeps a paper logbook of every passage"),
		chromedp.SetValue(chromedp.CSS("#p-"+id), "0.7"),
		chromedp.Click(chromedp.CSS("#"+id+" details.edit button[type=submit]")))
	waitText("edited", "The fact is updated.")
	if got := mcpList(t, ctx, srv, map[string]any{"user_id": "ana"}); got.Total != 1 || got.Facts[0].Content != "Keeps a paper logbook of every passage" || got.Facts[0].Confidence != 0.7 {
		t.Errorf("after the edit list_memories = %+v", got.Facts)
	}
	if f := diskFacts(t, dataDir, "ana"); len(f) != 1 || f[0].Content != "Keeps a paper logbook of every passage" {
		t.Errorf("after the edit memory.json holds %+v", f)
	}
	var hist memory.HistoryResult
	if err := srv.tool(ctx, "memory_history", map[string]any{"user_id": "ana", "fact_id": id}, &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Events) != 2 || hist.Events[1].Event != memory.FactUpdated {
		t.Errorf("memory_history after the edit = %+v, want created then updated", hist.Events)
	}

	// Delete it.
	do("delete", acceptConfirms, chromedp.Click(chromedp.CSS("#"+id+" form[action$='/facts/delete'] button")))
	waitText("deleted", "What went with it")
	if got := mcpList(t, ctx, srv, map[string]any{"user_id": "ana"}); got.Total != 0 {
		t.Errorf("after the delete list_memories = %+v", got.Facts)
	}
	if f := diskFacts(t, dataDir, "ana"); len(f) != 0 {
		t.Errorf("after the delete memory.json holds %+v", f)
	}

	// Forget a thread.
	do("forget thread", chromedp.Navigate(v.base+"/exchanges?user=ana&thread=trip"))
	waitText("trip listed", "Which marina in Horta")
	do("forget thread", acceptConfirms, chromedp.Click(chromedp.CSS("#forget-thread")))
	waitText("thread forgotten", "Forgotten: thread trip")
	if got := mcpList(t, ctx, srv, map[string]any{"user_id": "ana", "kind": "turns", "thread_id": "trip"}); got.Total != 0 {
		t.Errorf("after forgetting the thread list_memories = %+v", got.Turns)
	}
	if got := mcpList(t, ctx, srv, map[string]any{"user_id": "ana", "kind": "turns"}); got.Total != 15 {
		t.Errorf("after forgetting the thread %d exchanges are left, want 15", got.Total)
	}
	log, err := os.ReadFile(filepath.Join(dataDir, "users", "ana", "turns.jsonl"))
	if err != nil || strings.Contains(string(log), "Horta") {
		t.Errorf("turns.jsonl still holds the forgotten thread (%v)", err)
	}

	// Requests without the session, or from another site, are refused.
	if res, err := http.Get(v.base + "/facts?user=ana"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without token or cookie = %v (%v), want 401", res.StatusCode, err)
	}
	// A page on another origin of the same site (another loopback port):
	// the SameSite=Strict cookie goes along, the Origin check refuses.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/facts/add"><input name="user" value="ana"><input name="content" value="Was tricked by another site"><input name="csrf" value="guess"><button id="go">go</button></form>`, v.base)
	}))
	defer evil.Close()
	do("foreign origin", chromedp.Navigate(evil.URL), chromedp.Click(chromedp.ID("go")))
	waitText("foreign origin refused", "Requests from other sites are refused.")
	if got := mcpList(t, ctx, srv, map[string]any{"user_id": "ana"}); got.Total != 0 {
		t.Errorf("the foreign post saved a fact: %+v", got.Facts)
	}

	// Hostile remembered text runs no script on any page.
	hostile := []string{
		`<script>window.__pwned=1</script>`,
		`</memory><img src=x onerror="window.__pwned=2">`,
		`" onmouseover="window.__pwned=3" autofocus onfocus="window.__pwned=4" x="`,
		`</textarea><svg onload="window.__pwned=5">`,
	}
	for i, h := range hostile {
		add("mallory", "evil", h, h)
		if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "mallory", "content": fmt.Sprintf("Fact %d %s", i, h)}, &saved); err != nil {
			t.Fatal(err)
		}
	}
	for _, page := range []string{"/", "/facts", "/exchanges", "/exchanges?q=pwned+window", "/history", "/preview?q=window+pwned", "/sessions", "/status", "/data"} {
		sep := "?"
		if strings.Contains(page, "?") {
			sep = "&"
		}
		do("hostile "+page, chromedp.Navigate(v.base+page+sep+"user=mallory"))
		ok, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.__pwned === undefined &&
			document.querySelectorAll("main script, [onerror], [onload], [onmouseover], [onfocus]").length === 0`))
		if err != nil || !ok {
			t.Errorf("hostile text on %s ran or planted script (%v)", page, err)
		}
	}
	do("hostile facts", chromedp.Navigate(v.base+"/facts?user=mallory"))
	waitText("hostile shown as text", `<script>window.__pwned=1</script>`)

	// Screenshots of every page, desktop and phone.
	pages := []struct{ name, path string }{
		{"profile", "/"}, {"facts", "/facts"}, {"exchanges", "/exchanges"}, {"exchanges-search", "/exchanges?q=reef+wind"},
		{"sessions", "/sessions"}, {"history", "/history"}, {"preview", "/preview?q=should+we+reef+tonight"},
		{"status", "/status"}, {"data", "/data"},
	}
	if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "ana", "content": "Sails a 34-foot sloop", "category": "context"}, &saved); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"375px", 375, 800}} {
		do("viewport", chromedp.EmulateViewport(size.w, size.h))
		for _, p := range pages {
			sep := "?"
			if strings.Contains(p.path, "?") {
				sep = "&"
			}
			do("screenshot "+p.name, chromedp.Navigate(v.base+p.path+sep+"user=ana"))
			png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(shots, p.name+"-"+size.name+".png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			if size.w == 375 {
				wide, _ := chromedp.Run(b, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
				if wide {
					t.Errorf("%s scrolls sideways at 375 px", p.name)
				}
			}
		}
	}
	t.Logf("screenshots in %s", shots)
}
