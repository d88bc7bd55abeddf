package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
	"github.com/mnemo-mcp/mnemo/server"
)

// Team mode as a team runs it: one PostgreSQL, two mnemo serve --http
// processes of the real binary, each with its own empty data directory,
// and HAProxy (Debian's package) in front of them, round-robin without
// stickiness. Tokens are added and revoked with mnemo token through
// either instance's settings; the viewer is driven in Chromium through
// the balancer, so its pages and form posts land on either instance.

// haproxyPath finds HAProxy; without it the test skips locally and fails
// under CI=true.
func haproxyPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	testutil.SkipMissing(t, "HAProxy", "no haproxy on PATH or in /usr/sbin", "install HAProxy (apt-get install -y haproxy)")
	return ""
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitUntil checks cond until it holds; ctx is the only bound.
func waitUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// startBalancer runs HAProxy on addr in front of the backends
// (host:port), round-robin, each request balanced on its own.
func startBalancer(t *testing.T, ctx context.Context, addr string, backends ...string) {
	t.Helper()
	startBalancerWith(t, ctx, addr, "", backends...)
}

// startBalancerWith is startBalancer with more lines (each indented and
// ending in a newline) in HAProxy's defaults section.
func startBalancerWith(t *testing.T, ctx context.Context, addr, defaults string, backends ...string) {
	t.Helper()
	cfg := fmt.Sprintf(`global
    maxconn 256
defaults
    mode http
    option http-server-close
    timeout connect 5s
    timeout client 60s
    timeout server 60s
%sfrontend team
    bind %s
    default_backend mnemo
backend mnemo
    balance roundrobin
`, defaults, addr)
	for i, b := range backends {
		cfg += fmt.Sprintf("    server mnemo%d %s\n", i, b)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxyPath(t), "-db", "-f", path)
	testutil.DieWithTest(cmd)
	out := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	waitUntil(ctx, t, "haproxy listening on "+addr, func() bool {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// pingStatus is the status of an MCP ping sent to the endpoint with
// token: 200 when the token is accepted, 401 when it is refused.
func pingStatus(t *testing.T, endpoint, token string) int {
	t.Helper()
	code, _, _ := rawPost(t, endpoint, "", map[string]string{"Authorization": "Bearer " + token}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	return code
}

// page is one Chromium tab.
type page struct {
	t   *testing.T
	ctx context.Context // the test's bound
	b   context.Context // the tab
}

func newPage(t *testing.T, ctx context.Context) *page {
	return &page{t: t, ctx: ctx, b: browser(t, ctx)}
}

func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.b, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func (p *page) text() string {
	p.t.Helper()
	s, err := chromedp.Run(p.b, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// waitText waits until the page shows s (a page being left ends a poll;
// the next one polls the new page). The test's context is the only
// bound: each poll's time-out only starts the next poll.
func (p *page) waitText(what, s string) {
	p.t.Helper()
	q, _ := json.Marshal(s)
	var err error
	for p.ctx.Err() == nil {
		if _, err = chromedp.Run(p.b, chromedp.Poll[bool]("!!document.body && document.body.innerText.includes("+string(q)+")", chromedp.WithPollingTimeout(20*time.Second))); err == nil {
			return
		}
		if p.ctx.Err() != nil {
			break
		}
	}
	p.t.Fatalf("%s: the page never showed %q: %v; it shows:\n%s", what, s, err, p.text())
}

// login logs in to the viewer of the server at base as a person does:
// the login page, the token typed into its field, the button clicked.
func (p *page) login(base, token string) {
	p.t.Helper()
	p.do("open the login page", chromedp.Navigate(base+"/ui/login"))
	p.do("log in", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("form button[type=submit]")))
	p.waitText("logged in", "Log out")
}

// viewerPosts counts the viewer's successful form posts (answered 303) in
// a server's log.
var viewerPost = regexp.MustCompile(`method=POST path=/ui/facts/\w+ status=303`)

func TestTeamBehindBalancer(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	haproxyPath(t)
	chromiumPath(t)
	dbURL := pgtest.NewDatabase(t)
	ctx, cancel := context.WithCancel(t.Context()) // go test -timeout is the bound
	defer cancel()

	lbAddr := freeAddr(t)
	lb := "http://" + lbAddr
	env := []string{"MNEMO_STORAGE=" + dbURL, "MNEMO_HTTP_PUBLIC_URL=" + lb + "/mcp"}
	dirA, dirB := t.TempDir(), t.TempDir()
	addToken := func(dir, user string) string {
		t.Helper()
		cmd := mnemoCmd(t, dir, env, "token", "add", "--user", user)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mnemo token add --user %s: %v\n%s", user, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), lb+"/ui/login") {
			t.Errorf("mnemo token add does not say where to log in:\n%s", stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	revoke := func(dir, user string) {
		t.Helper()
		out, err := mnemoCmd(t, dir, env, "token", "list", "--json").Output()
		if err != nil {
			t.Fatalf("mnemo token list: %v", err)
		}
		var list []struct{ ID, User string }
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatal(err)
		}
		for _, tk := range list {
			if tk.User == user {
				if out, err := mnemoCmd(t, dir, env, "token", "revoke", tk.ID).CombinedOutput(); err != nil {
					t.Fatalf("mnemo token revoke: %v\n%s", err, out)
				}
			}
		}
	}

	// A token added with instance A's settings before anything runs;
	// neither instance has a tokens file.
	alice := addToken(dirA, "alice")
	a := startHTTP(t, dirA, env)
	b := startHTTP(t, dirB, env)
	for _, p := range []*httpProc{a, b} {
		if !strings.Contains(p.stderr.String(), "log in at "+lb+"/ui/login") {
			t.Errorf("the start-up lines do not say where to log in:\n%s", p.stderr.String())
		}
	}
	startBalancer(t, ctx, lbAddr, strings.TrimSuffix(strings.TrimPrefix(a.url, "http://"), "/mcp"),
		strings.TrimSuffix(strings.TrimPrefix(b.url, "http://"), "/mcp"))

	// MCP through the balancer: every call lands on one instance or the
	// other, and all see one memory.
	ac := mcpClient(t, lb+"/mcp", map[string]string{"Authorization": "Bearer " + alice})
	for i, fact := range []string{"Alice keeps bees on the roof.", "Alice sails on Saturdays."} {
		if res := callHTTPTool(t, ac, "save_memory", map[string]any{"content": fact}); res.IsError {
			t.Fatalf("save_memory %d through the balancer: %s", i, resultText(res))
		}
	}
	for _, p := range []*httpProc{a, b} {
		c := mcpClient(t, p.url, map[string]string{"Authorization": "Bearer " + alice})
		if res := callHTTPTool(t, c, "list_memories", map[string]any{"kind": "facts"}); res.IsError || !strings.Contains(resultText(res), "keeps bees") || !strings.Contains(resultText(res), "Saturdays") {
			t.Errorf("list_memories on %s = %s, want both facts", p.url, resultText(res))
		}
	}

	// A token added through instance B's settings while both run works
	// on both; revoked through A's, both refuse it within 5 s.
	bob := addToken(dirB, "bob")
	for _, p := range []*httpProc{a, b} {
		waitUntil(ctx, t, "bob's new token accepted by "+p.url, func() bool { return pingStatus(t, p.url, bob) == http.StatusOK })
	}
	if code := pingStatus(t, lb+"/mcp", bob); code != http.StatusOK {
		t.Errorf("bob's token through the balancer = %d, want 200", code)
	}
	revoke(dirA, "bob")
	revoked := time.Now()
	refused, stop := context.WithTimeoutCause(ctx, 5*time.Second, fmt.Errorf("a revoked token still accepted 5 s after mnemo token revoke"))
	for _, p := range []*httpProc{a, b} {
		waitUntil(refused, t, "bob's revoked token refused by "+p.url, func() bool { return pingStatus(t, p.url, bob) == http.StatusUnauthorized })
	}
	stop()
	t.Logf("both instances refused the revoked token %v after mnemo token revoke returned", time.Since(revoked).Round(time.Millisecond))
	for range 2 {
		if code := pingStatus(t, lb+"/mcp", bob); code != http.StatusUnauthorized {
			t.Errorf("bob's revoked token through the balancer = %d, want 401", code)
		}
	}
	if code := pingStatus(t, lb+"/mcp", alice); code != http.StatusOK {
		t.Errorf("alice's token after bob's was revoked = %d, want 200", code)
	}

	// The viewer in Chromium, through the balancer.
	pg := newPage(t, ctx)
	do, waitText := pg.do, pg.waitText
	acceptConfirms := chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`)

	pg.login(lb, alice)

	// Add, edit and forget facts until the viewer's posts have landed on
	// both instances.
	list := func() string {
		t.Helper()
		res := callHTTPTool(t, ac, "list_memories", map[string]any{"kind": "facts"})
		if res.IsError {
			t.Fatalf("list_memories: %s", resultText(res))
		}
		out, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for round := 0; ; round++ {
		na := len(viewerPost.FindAllString(a.stderr.String(), -1))
		nb := len(viewerPost.FindAllString(b.stderr.String(), -1))
		if round >= 2 && na > 0 && nb > 0 {
			t.Logf("%d rounds of add, edit, forget: the viewer's posts landed %d times on instance A, %d on B", round, na, nb)
			break
		}
		if round == 10 {
			t.Fatalf("after %d rounds the viewer's posts reached instance A %d and B %d times; the balancer does not alternate", round, na, nb)
		}
		// Round-robin over a fixed pattern of requests could send every
		// post to one instance; one more request through the balancer
		// every other round shifts the turn.
		if round%2 == 1 {
			if res, err := http.Get(lb + "/healthz"); err == nil {
				res.Body.Close()
			}
		}
		content := fmt.Sprintf("Alice moors in berth %d", round)
		do("facts page", chromedp.Navigate(lb+"/ui/facts"))
		do("open the add form", chromedp.Evaluate[chromedp.Void](`document.querySelector("form[action$='/facts/add']").closest("details").open = true`))
		do("add", chromedp.SendKeys(chromedp.CSS("form[action$='/facts/add'] textarea[name=content]"), content),
			chromedp.Click(chromedp.CSS("form[action$='/facts/add'] button[type=submit]")))
		waitText("added", "The fact is saved.")
		var facts struct {
			Facts []struct{ ID, Content string } `json:"facts"`
		}
		if err := json.Unmarshal([]byte(list()), &facts); err != nil {
			t.Fatal(err)
		}
		id := ""
		for _, f := range facts.Facts {
			if f.Content == content {
				id = f.ID
			}
		}
		if id == "" {
			t.Fatalf("the fact added in the viewer is not listed by list_memories: %+v", facts.Facts)
		}
		edited := content + " at Cascais marina"
		// A page reached by a form's redirect is loaded afresh before the
		// next click (chromedp does not wait for a navigation a click
		// starts); the GET, too, lands on either instance.
		do("facts page", chromedp.Navigate(lb+"/ui/facts"))
		do("edit", chromedp.Click(chromedp.CSS("#"+id+" details.edit summary")),
			chromedp.SetValue(chromedp.CSS("#"+id+" form[action$='/facts/edit'] textarea[name=content]"), edited),
			chromedp.Click(chromedp.CSS("#"+id+" form[action$='/facts/edit'] button[type=submit]")))
		waitText("edited", "The fact is updated.")
		if got := list(); !strings.Contains(got, edited) {
			t.Errorf("after the edit list_memories = %s", got)
		}
		do("facts page", chromedp.Navigate(lb+"/ui/facts"))
		do("forget", acceptConfirms, chromedp.Click(chromedp.CSS("#"+id+" form[action$='/facts/delete'] button")))
		waitText("forgotten", "What went with it")
		if got := list(); strings.Contains(got, content) {
			t.Errorf("after forgetting list_memories still holds %q", content)
		}
	}

	// Log out: the login page again, and the viewer refuses the browser.
	do("log out", chromedp.Navigate(lb+"/ui/facts"))
	do("log out", chromedp.Click(chromedp.CSS("#logout")))
	waitText("logged out", "Your access token")
	do("after logout", chromedp.Navigate(lb+"/ui/facts"))
	waitText("refused after logout", "/ui/login")

	// A login form on another origin is refused with a page that says so.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/ui/login"><input name="token" value="%s"><button id="go">go</button></form>`, lb, alice)
	}))
	defer evil.Close()
	do("foreign origin", chromedp.Navigate(evil.URL), chromedp.Click(chromedp.ID("go")))
	waitText("foreign origin refused", "Requests from pages of another site")

	for _, dir := range []string{dirA, dirB} {
		for _, name := range []string{"tokens.json", server.UIKeyFileName} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s holds %s: with PostgreSQL storage nothing of the team's is kept per instance", dir, name)
			}
		}
	}
	for _, p := range []*httpProc{a, b} {
		if s := p.stderr.String(); strings.Contains(s, alice) || strings.Contains(s, bob) {
			t.Errorf("a server log holds a token")
		}
	}
}

// TestE2EHTTPViewerBrowser: one serve --http on the file store, its
// viewer in Chromium: a wrong token typed into the login form is
// refused, the right one logs in, a fact added through the form is there
// for the MCP tools, and the log-out button logs out. The viewer's key is
// a 0600 file in the data directory.
func TestE2EHTTPViewerBrowser(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	chromiumPath(t)
	ctx, cancel := context.WithCancel(t.Context()) // go test -timeout is the bound
	defer cancel()
	dir := t.TempDir()
	cmd := mnemoCmd(t, dir, nil, "token", "add", "--user", "alice")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mnemo token add: %v\n%s", err, stderr.String())
	}
	alice := strings.TrimSpace(string(out))
	if !strings.Contains(stderr.String(), "http://127.0.0.1:8787/ui/login") {
		t.Errorf("mnemo token add does not say where to log in:\n%s", stderr.String())
	}
	srv := startHTTP(t, dir, nil)
	base := strings.TrimSuffix(srv.url, "/mcp")
	if !strings.Contains(srv.stderr.String(), "log in at "+base+"/ui/login") {
		t.Errorf("the start-up lines do not say where to log in:\n%s", srv.stderr.String())
	}
	if code, _, body := rawPost(t, srv.url, "memory.example.org", nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusForbidden || !strings.Contains(body, "http_allowed_hosts") {
		t.Errorf("a request for another host name = %d %q, want 403 naming http_allowed_hosts", code, body)
	}
	if fi, err := os.Stat(filepath.Join(dir, server.UIKeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the viewer's key file: %v, %v; want it, 0600", err, fi)
	}

	pg := newPage(t, ctx)
	pg.do("open the login page", chromedp.Navigate(base+"/ui/login"))
	pg.do("wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "mnemo_not-a-token"), chromedp.Click(chromedp.CSS("form button[type=submit]")))
	pg.waitText("wrong token refused", "That token was not accepted")
	pg.login(base, alice)
	pg.do("facts page", chromedp.Navigate(base+"/ui/facts"))
	pg.do("add", chromedp.SendKeys(chromedp.CSS("form[action$='/facts/add'] textarea[name=content]"), "Keeps bees on the roof"),
		chromedp.Click(chromedp.CSS("form[action$='/facts/add'] button[type=submit]")))
	pg.waitText("added", "The fact is saved.")
	shot, err := chromedp.Run(pg.b, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "serve-facts-logged-in.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	if res := callHTTPTool(t, c, "list_memories", map[string]any{"kind": "facts"}); res.IsError || !strings.Contains(resultText(res), "Keeps bees on the roof") {
		t.Errorf("list_memories after the viewer's add = %s", resultText(res))
	}
	pg.do("log out", chromedp.Click(chromedp.CSS("#logout")))
	pg.waitText("logged out", "Your access token")
	pg.do("after logout", chromedp.Navigate(base+"/ui/facts"))
	pg.waitText("refused after logout", "/ui/login")
}

// TestTeamRefusesToStartWithoutTokens: with PostgreSQL storage and no
// token in the database (whatever the data directory holds), serve
// --http refuses to start and says how to add one.
func TestTeamRefusesToStartWithoutTokens(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	dbURL := pgtest.NewDatabase(t)
	out, err := mnemoCmd(t, t.TempDir(), []string{"MNEMO_STORAGE=" + dbURL}, "serve", "--http", "127.0.0.1:0").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), "no tokens in the mnemo_tokens table") ||
		!strings.Contains(string(out), "mnemo token add --user NAME") {
		t.Errorf("serve --http without tokens: %v, output %q; want exit %d naming the table and mnemo token add", err, out, exitUsage)
	}
}
