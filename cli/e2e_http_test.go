package cli

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/server"
)

// The HTTP end-to-end tests run the real binary as mnemo serve --http on
// a free loopback port and talk to it with mcp-go's Streamable HTTP client
// and plain HTTP requests.

// httpProc is one running mnemo serve --http.
type httpProc struct {
	cmd    *exec.Cmd
	url    string // the MCP endpoint
	stderr *testutil.LockedBuffer
	done   chan struct{}
}

// mnemoCmd is the binary with args, the environment without the caller's
// MNEMO_ and OPENAI_ variables, the data dir and env.
func mnemoCmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(mnemoBinary(t), args...)
	testutil.DieWithTest(cmd)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MNEMO_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"MNEMO_DATA_DIR=" + dir}, env...)...)
	return cmd
}

// startHTTP starts mnemo serve --http 127.0.0.1:0 with extra args and
// returns once it prints where it listens.
func startHTTP(t *testing.T, dir string, env []string, args ...string) *httpProc {
	t.Helper()
	cmd := mnemoCmd(t, dir, env, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	p := &httpProc{cmd: cmd, stderr: &testutil.LockedBuffer{}, done: make(chan struct{})}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.Write([]byte(line + "\n"))
			if u, ok := strings.CutPrefix(line, "mnemo: listening on "); ok {
				found <- u
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	select {
	case p.url = <-found:
	case <-p.done:
		cmd.Wait()
		t.Fatalf("mnemo serve --http exited before listening:\n%s", p.stderr.String())
	case <-t.Context().Done(): // no deadline of its own: go test -timeout bounds the start-up
		t.Fatalf("mnemo serve --http had not listened when the test ended:\n%s", p.stderr.String())
	}
	return p
}

// stop sends SIGTERM and returns the exit code.
func (p *httpProc) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// mcpClient is an initialized Streamable HTTP client sending headers.
func mcpClient(t *testing.T, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20250618, ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"}}})
	if err != nil {
		t.Fatalf("Initialize() error = %v", err)
	}
	return c
}

func callHTTPTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("CallTool(%s) error = %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

// hashDir returns the SHA-256 of every file under dir by relative path.
func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fakeIssuer is an OAuth authorization server: metadata and a JWKS with
// one RSA key generated for the test.
type fakeIssuer struct {
	url    string
	signer jose.Signer
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: string(jose.RS256), Use: "sig"}
	iss := &fakeIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.url, "jwks_uri": iss.url + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	iss.url = ts.URL
	iss.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

// token signs an access token for sub with the given issuer, audience
// and expiry.
func (iss *fakeIssuer) token(t *testing.T, issuer, audience, sub string, exp time.Time) string {
	t.Helper()
	claims := jwt.Claims{Issuer: issuer, Subject: sub, Audience: jwt.Audience{audience},
		Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour))}
	tok, err := jwt.Signed(iss.signer).Claims(claims).Claims(map[string]any{"scope": "mnemo"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawPost posts one JSON-RPC message to url with headers and returns the
// status, the WWW-Authenticate header and the body.
func rawPost(t *testing.T, url, host string, headers map[string]string, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion20250618)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// TestE2EHTTPAuth drives mnemo serve --http with every kind of refused
// credential and request, and checks that each gets the right status or
// tool error and that none changes a byte of the data directory.
func TestE2EHTTPAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	iss := newFakeIssuer(t)
	add := func(args ...string) string {
		t.Helper()
		out, err := mnemoCmd(t, dir, nil, append([]string{"token", "add"}, args...)...).Output()
		if err != nil {
			t.Fatalf("mnemo token add %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	alice := add("--user", "alice")
	doomed := add("--user", "dora")
	srv := startHTTP(t, dir, []string{"MNEMO_OAUTH_ISSUER=" + iss.url, "MNEMO_OAUTH_SCOPE=mnemo"})
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	// What works: alice's token and a good OAuth token for carol.
	ac := mcpClient(t, srv.url, bearer(alice))
	if res := callHTTPTool(t, ac, "add_memory", map[string]any{"user_input": "My boat is called Saltmarsh.", "agent_response": "A fine name."}); res.IsError || !strings.Contains(resultText(res), `"user_id":"alice"`) {
		t.Fatalf("add_memory as alice = %s, want a turn in alice's memory", resultText(res))
	}
	good := iss.token(t, iss.url, srv.url, "carol", time.Now().Add(time.Hour))
	cc := mcpClient(t, srv.url, bearer(good))
	if res := callHTTPTool(t, cc, "save_memory", map[string]any{"content": "Carol prefers tea."}); res.IsError || !strings.Contains(resultText(res), `"user_id":"carol"`) {
		t.Fatalf("save_memory with an OAuth token for carol = %s, want it in carol's memory", resultText(res))
	}

	// dora's token is revoked by another process while the server runs.
	doraID := func() string {
		out, err := mnemoCmd(t, dir, nil, "token", "list", "--json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var list []struct{ ID, User string }
		json.Unmarshal(out, &list)
		for _, tk := range list {
			if tk.User == "dora" {
				return tk.ID
			}
		}
		t.Fatalf("token list = %s, want dora's token", out)
		return ""
	}()
	if code, _, _ := rawPost(t, srv.url, "", bearer(doomed), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusOK {
		t.Fatalf("ping with dora's token before revoke: status %d, want 200", code)
	}
	if out, err := mnemoCmd(t, dir, nil, "token", "revoke", doraID).CombinedOutput(); err != nil {
		t.Fatalf("mnemo token revoke: %v\n%s", err, out)
	}

	before := hashDir(t, dir)
	write := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"intruder was here","agent_response":"ok","user_id":"alice"}}}`
	host := strings.TrimPrefix(srv.url, "http://")
	host = host[:strings.IndexByte(host, '/')]
	cases := []struct {
		name       string
		headers    map[string]string
		host       string
		wantStatus int
		wantAuth   string // in WWW-Authenticate
	}{
		{"no token", nil, "", 401, `resource_metadata="http://` + host + `/.well-known/oauth-protected-resource"`},
		{"malformed", map[string]string{"Authorization": "Bearer not a token"}, "", 400, "invalid_request"},
		{"wrong token", bearer("mnemo_" + strings.Repeat("A", 43)), "", 401, "invalid_token"},
		{"expired", bearer(iss.token(t, iss.url, srv.url, "carol", time.Now().Add(-time.Hour))), "", 401, "expired"},
		{"wrong issuer", bearer(iss.token(t, "https://evil.example.com", srv.url, "carol", time.Now().Add(time.Hour))), "", 401, "another issuer"},
		{"wrong audience", bearer(iss.token(t, iss.url, "https://other.example.com/mcp", "carol", time.Now().Add(time.Hour))), "", 401, "not issued for this resource"},
		{"revoked", bearer(doomed), "", 401, "invalid_token"},
		{"bad origin", map[string]string{"Authorization": "Bearer " + alice, "Origin": "https://evil.example.com"}, "", 403, ""},
		{"bad host", bearer(alice), "evil.example.com:" + host[strings.LastIndexByte(host, ':')+1:], 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, auth, body := rawPost(t, srv.url, tc.host, tc.headers, write)
			if code != tc.wantStatus || !strings.Contains(auth, tc.wantAuth) {
				t.Errorf("status %d, WWW-Authenticate %q, body %q; want %d and %q", code, auth, body, tc.wantStatus, tc.wantAuth)
			}
		})
	}
	t.Run("another user's user_id", func(t *testing.T) {
		for _, tool := range []struct {
			name string
			args map[string]any
		}{
			{"add_memory", map[string]any{"user_input": "intruder", "agent_response": "ok", "user_id": "carol"}},
			{"retrieve_memory", map[string]any{"query": "tea", "user_id": "carol"}},
			{"forget_memory", map[string]any{"user_id": "carol", "all": true}},
		} {
			res := callHTTPTool(t, ac, tool.name, tool.args)
			if !res.IsError || !strings.Contains(resultText(res), `cannot use the memory of \"carol\"`) {
				t.Errorf("%s naming carol with alice's token = %s, want a refusal", tool.name, resultText(res))
			}
		}
		var rr mcp.ReadResourceRequest
		rr.Params.URI = "mnemo://memory/carol/facts.json"
		if _, err := ac.ReadResource(t.Context(), rr); err == nil {
			t.Errorf("alice reading carol's facts resource succeeded, want a refusal")
		}
		list, err := ac.ListResources(t.Context(), mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Resources {
			if strings.Contains(r.URI, "carol") {
				t.Errorf("alice's resources/list shows %s", r.URI)
			}
		}
	})
	if after := hashDir(t, dir); !mapsEqual(before, after) {
		t.Errorf("the data directory changed during refused requests:\nbefore %v\nafter  %v", before, after)
	}

	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0", code)
	}
	logs := srv.stderr.String()
	for _, secret := range []string{alice, doomed, good} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a token")
		}
	}
	if !strings.Contains(logs, "user=alice") || !strings.Contains(logs, "status=401") {
		t.Errorf("access log lacks the requests: %s", logs)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestE2EHTTPRefusesToStart checks the start-up refusals.
func TestE2EHTTPRefusesToStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no authentication", []string{"serve", "--http", "127.0.0.1:0"}, "mnemo token add --user NAME"},
		{"insecure on every interface", []string{"serve", "--http", "0.0.0.0:0", "--insecure-no-auth"}, "only on a loopback address"},
		{"insecure without --http", []string{"serve", "--insecure-no-auth"}, "only for --http"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := mnemoCmd(t, t.TempDir(), nil, tc.args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), tc.want) {
				t.Errorf("mnemo %v: %v, output %q; want exit %d and %q", tc.args, err, out, exitUsage, tc.want)
			}
		})
	}
}

// stampRE matches the dates and times an injection stamps its lines with.
// (a date, then the weekday and the time where the line has them).
var stampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}( [A-Z][a-z]{2})?( \d{2}:\d{2})?`)

// TestE2EHTTPParity stores and retrieves the same exchanges over stdio
// and over HTTP and compares the results.
func TestE2EHTTPParity(t *testing.T) {
	t.Parallel()
	turns := []map[string]any{
		{"user_input": "I deploy the harbourmaster service to Fly.io every Friday.", "agent_response": "Noted: Friday deploys.", "thread_id": "p"},
		{"user_input": "My cat Miso hates the vacuum cleaner.", "agent_response": "Poor Miso.", "thread_id": "p"},
	}
	query := map[string]any{"query": "when do I deploy harbourmaster?", "thread_id": "p"}
	type outcome struct {
		Texts []string
		Inj   string
	}

	// The injection dates its exchanges to the minute, and the two runs
	// may fall on either side of a minute (or day) boundary: the stamps
	// are compared apart, each within the test's run.
	start := time.Now().UTC().Truncate(time.Minute)
	stdioDir := t.TempDir()
	sp := startServer(t, stdioDir, "MNEMO_USER_ID=alice")
	sp.initialize(t.Context())
	var stdio outcome
	for _, a := range turns {
		var r addResult
		if err := sp.tool(t.Context(), "add_memory", a, &r); err != nil {
			t.Fatal(err)
		}
	}
	var rr retrieveResult
	if err := sp.tool(t.Context(), "retrieve_memory", query, &rr); err != nil {
		t.Fatal(err)
	}
	for _, p := range rr.Pages {
		stdio.Texts = append(stdio.Texts, p.User)
	}
	stdio.Inj = rr.Injection
	sp.stop()

	httpDir := t.TempDir()
	out, err := mnemoCmd(t, httpDir, nil, "token", "add", "--user", "alice").Output()
	if err != nil {
		t.Fatal(err)
	}
	hp := startHTTP(t, httpDir, nil)
	c := mcpClient(t, hp.url, map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(out))})
	for _, a := range turns {
		if res := callHTTPTool(t, c, "add_memory", a); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	res := callHTTPTool(t, c, "retrieve_memory", query)
	b, _ := json.Marshal(res.StructuredContent)
	var hr retrieveResult
	if err := json.Unmarshal(b, &hr); err != nil {
		t.Fatal(err)
	}
	var overHTTP outcome
	for _, p := range hr.Pages {
		overHTTP.Texts = append(overHTTP.Texts, p.User)
	}
	overHTTP.Inj = hr.Injection
	end := time.Now().UTC()
	for _, o := range []*outcome{&stdio, &overHTTP} {
		o.Inj = stampRE.ReplaceAllStringFunc(o.Inj, func(stamp string) string {
			var when time.Time
			var err error
			for _, layout := range []string{"2006-01-02 Mon 15:04", "2006-01-02 15:04", "2006-01-02 Mon", "2006-01-02"} {
				if when, err = time.Parse(layout, stamp); err == nil {
					if !strings.HasSuffix(layout, "15:04") {
						if start := start.Truncate(24 * time.Hour); when.Before(start) || when.After(end) {
							t.Errorf("injection date %s is outside the test's run (%s to %s)", stamp, start, end)
						}
					} else if when.Before(start) || when.After(end) {
						t.Errorf("injection time %s is outside the test's run (%s to %s)", stamp, start, end)
					}
					break
				}
			}
			if err != nil {
				t.Errorf("injection stamp %q: %v", stamp, err)
			}
			return "<time>"
		})
	}
	if strings.Join(stdio.Texts, "|") != strings.Join(overHTTP.Texts, "|") || stdio.Inj != overHTTP.Inj {
		t.Errorf("retrieve_memory over HTTP = %+v\nover stdio = %+v; want the same", overHTTP, stdio)
	}
	if len(stdio.Texts) == 0 || !strings.Contains(stdio.Texts[0], "harbourmaster") {
		t.Errorf("retrieve_memory pages = %v, want the harbourmaster turn first", stdio.Texts)
	}
	hp.stop(t)
}

// TestE2EHTTPViewer checks the memory viewer under /ui of serve --http
// through the real binary: it is behind the same tokens as /mcp (a
// browser logs in once on /ui/login and keeps the token in a cookie), a
// caller sees only their own memory, and a revoked token stops working.
func TestE2EHTTPViewer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token := func(user string) string {
		out, err := mnemoCmd(t, dir, nil, "token", "add", "--user", user).Output()
		if err != nil {
			t.Fatalf("mnemo token add: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	alice, bob := token("alice"), token("bob")
	srv := startHTTP(t, dir, nil)
	ac := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	if res := callHTTPTool(t, ac, "save_memory", map[string]any{"content": "Alice keeps bees on the roof."}); res.IsError {
		t.Fatalf("save_memory: %s", resultText(res))
	}
	bc := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + bob})
	if res := callHTTPTool(t, bc, "save_memory", map[string]any{"content": "Bob collects vinyl records."}); res.IsError {
		t.Fatalf("save_memory: %s", resultText(res))
	}
	base := strings.TrimSuffix(srv.url, "/mcp")
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := browser.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	login := func(tok string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/ui/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	if code, body := get("/ui/facts"); code != http.StatusUnauthorized || !strings.Contains(body, "/ui/login") {
		t.Errorf("viewer without a token = %d, want 401 pointing at the login", code)
	}
	if code := login("mnemo_wrong"); code != http.StatusUnauthorized {
		t.Errorf("login with a wrong token = %d, want 401", code)
	}
	if code := login(alice); code != http.StatusOK { // 303 to /ui/, followed
		t.Fatalf("login with alice's token = %d, want the viewer", code)
	}
	code, body := get("/ui/facts")
	if code != http.StatusOK || !strings.Contains(body, "Alice keeps bees") || strings.Contains(body, "vinyl") {
		t.Errorf("alice's facts page = %d, want her fact and not bob's:\n%s", code, body)
	}
	if code, body := get("/ui/facts?user=bob"); code != http.StatusForbidden || strings.Contains(body, "vinyl") {
		t.Errorf("bob's facts as alice = %d, want 403 without his facts", code)
	}
	for _, c := range jar.Cookies(mustURL(t, base+"/ui/")) {
		if c.Name == server.UICookie && c.Value != alice {
			t.Errorf("cookie %s holds something else than the token", c.Name)
		}
	}
	// Revoking alice's token logs the browser out at its next request.
	out, err := mnemoCmd(t, dir, nil, "token", "list", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ ID, User string }
	json.Unmarshal(out, &list)
	for _, tk := range list {
		if tk.User == "alice" {
			if out, err := mnemoCmd(t, dir, nil, "token", "revoke", tk.ID).CombinedOutput(); err != nil {
				t.Fatalf("revoke: %v %s", err, out)
			}
		}
	}
	if code, _ := get("/ui/facts"); code != http.StatusUnauthorized {
		t.Errorf("viewer after alice's token was revoked = %d, want 401", code)
	}
	if strings.Contains(srv.stderr.String(), alice) || strings.Contains(srv.stderr.String(), bob) {
		t.Errorf("the server log holds a token")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
