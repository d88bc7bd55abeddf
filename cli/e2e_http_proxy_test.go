package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/server"
)

// The viewer's login limit behind a balancer (issue 41, low 12): with
// trusted_proxies set, the clients a listed proxy reports in
// X-Forwarded-For or Forwarded each have their own bucket; the same
// headers from any other address are ignored.

// fromAddr is an HTTP client whose connections leave from the loopback
// address src (Linux routes all of 127.0.0.0/8 to lo), as a balancer or
// another machine on the network would reach the server.
func fromAddr(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// loginTry posts token to base's login form, as a browser does, with the
// extra headers (a balancer's), and returns the status, Retry-After and
// the page.
func loginTry(t *testing.T, c *http.Client, base, token string, headers map[string]string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("post the login form: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Retry-After"), string(body)
}

// maxTries bounds how many wrong logins a test sends to reach the limit:
// server.UILoginBurst, and room for the tokens that come back meanwhile (one
// every 6 s) on a slow machine.
const maxTries = 3 * server.UILoginBurst

// exhaust sends wrong logins until one is refused 429 and returns that
// answer's Retry-After and page; it fails the test when none is refused.
func exhaust(t *testing.T, what string, try func(i int) (int, string, string)) (string, string) {
	t.Helper()
	for i := range maxTries {
		code, retry, page := try(i)
		switch code {
		case http.StatusTooManyRequests:
			if i < server.UILoginBurst {
				t.Errorf("%s: refused after %d wrong logins, want %d allowed at once", what, i, server.UILoginBurst)
			}
			return retry, page
		case http.StatusUnauthorized:
		default:
			t.Fatalf("%s: wrong login %d answered %d, want 401 or 429", what, i, code)
		}
	}
	t.Fatalf("%s: %d wrong logins and none refused; want 429 after %d", what, maxTries, server.UILoginBurst)
	return "", ""
}

// waitSays is the page's "wait N seconds" in seconds; -1 when it says no
// such thing.
var waitSays = regexp.MustCompile(`Please wait (\d+) seconds?, then try again\.`)

func checkTryAgainPage(t *testing.T, what, retry, page string) {
	t.Helper()
	secs, err := strconv.Atoi(retry)
	if err != nil || secs < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds", what, retry)
	}
	m := waitSays.FindStringSubmatch(page)
	if m == nil {
		t.Errorf("%s: the 429 page does not say when to try again:\n%s", what, page)
		return
	}
	if m[1] != retry {
		t.Errorf("%s: the page says wait %s seconds, Retry-After says %s", what, m[1], retry)
	}
	if !strings.Contains(page, `<form method="post"`) {
		t.Errorf("%s: the 429 page has no login form to try again with:\n%s", what, page)
	}
}

// TestE2EHTTPTrustedProxies: two people behind one trusted balancer
// (127.0.0.2, sending X-Forwarded-For or Forwarded as HAProxy and nginx
// do) have a login bucket each, so one's wrong tries do not lock out the
// other; a client that puts its own address first in X-Forwarded-For
// still counts as the address the proxy appended; from an address not
// listed (127.0.0.3) the headers are ignored and all its tries share one
// bucket; the 429 is a page that says when to try again, with
// Retry-After. Before the fix, the second person behind the balancer was
// refused at once (one bucket per connecting address) and the 429 was a
// line of text.
func TestE2EHTTPTrustedProxies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, []string{"MNEMO_TRUSTED_PROXIES=127.0.0.2, 10.9.0.0/16"})
	u, err := url.Parse(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + u.Host
	proxy, other := fromAddr("127.0.0.2"), fromAddr("127.0.0.3")
	const wrong = "mnemo_wrong_token_0123456789abcdef"

	// A mistypes the token until refused.
	retry, page := exhaust(t, "A behind the balancer", func(int) (int, string, string) {
		return loginTry(t, proxy, base, wrong, map[string]string{"X-Forwarded-For": "198.51.100.1"})
	})
	checkTryAgainPage(t, "A behind the balancer", retry, page)
	// A again, claiming to be B in front of what the proxy appended; and
	// through a second listed proxy (10.9.0.4) in front of the first.
	for _, xff := range []string{"198.51.100.2, 198.51.100.1", "198.51.100.1, 10.9.0.4"} {
		if code, _, _ := loginTry(t, proxy, base, wrong, map[string]string{"X-Forwarded-For": xff}); code != http.StatusTooManyRequests {
			t.Errorf("A with X-Forwarded-For %q: %d, want 429 (the right-most address not a trusted proxy is A)", xff, code)
		}
	}
	// B, behind the same balancer, is not locked out, and logs in.
	for _, h := range []map[string]string{
		{"X-Forwarded-For": "198.51.100.2"},
		{"Forwarded": `for="[2001:db8::2]:4711";proto=http, for=127.0.0.2`},
	} {
		if code, _, page := loginTry(t, proxy, base, wrong, h); code != http.StatusUnauthorized {
			t.Errorf("another person behind the balancer (%v), after A's wrong tries: %d, want 401 (a bucket of their own)\n%s", h, code, page)
		}
	}
	if code, _, _ := loginTry(t, proxy, base, alice, map[string]string{"X-Forwarded-For": "198.51.100.2"}); code != http.StatusSeeOther {
		t.Errorf("B logs in with a good token behind the balancer: %d, want 303", code)
	}

	// An address that is not a trusted proxy cannot pick its bucket: a
	// different X-Forwarded-For on each try is ignored.
	retry, page = exhaust(t, "an unlisted address", func(i int) (int, string, string) {
		return loginTry(t, other, base, wrong, map[string]string{
			"X-Forwarded-For": "203.0.113." + strconv.Itoa(i+1),
			"Forwarded":       "for=203.0.113." + strconv.Itoa(i+1),
		})
	})
	checkTryAgainPage(t, "an unlisted address", retry, page)

	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestTeamLoginBehindHAProxy goes through the real balancer: HAProxy
// with option forwardfor in front of one mnemo serve --http that trusts
// it (127.0.0.1); two people reach HAProxy from 127.0.0.2 and 127.0.0.3.
// One's wrong tries lock out only that one, even when it sends an
// X-Forwarded-For of its own naming the other.
func TestTeamLoginBehindHAProxy(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	haproxyPath(t)
	ctx, cancel := context.WithCancel(t.Context()) // go test -timeout is the bound
	defer cancel()
	lbAddr := freeAddr(t)
	lb := "http://" + lbAddr
	dir := t.TempDir()
	env := []string{"MNEMO_HTTP_PUBLIC_URL=" + lb + "/mcp", "MNEMO_TRUSTED_PROXIES=127.0.0.1"}
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, env)
	startBalancerWith(t, ctx, lbAddr, "    option forwardfor\n", strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/mcp"))

	a, b := fromAddr("127.0.0.2"), fromAddr("127.0.0.3")
	const wrong = "mnemo_wrong_token_0123456789abcdef"
	retry, page := exhaust(t, "A through HAProxy", func(int) (int, string, string) {
		return loginTry(t, a, lb, wrong, map[string]string{"X-Forwarded-For": "127.0.0.3"})
	})
	checkTryAgainPage(t, "A through HAProxy", retry, page)
	if code, _, _ := loginTry(t, b, lb, wrong, nil); code != http.StatusUnauthorized {
		t.Errorf("B through HAProxy after A's wrong tries: %d, want 401 (a bucket of their own)", code)
	}
	if code, _, _ := loginTry(t, b, lb, alice, nil); code != http.StatusSeeOther {
		t.Errorf("B logs in through HAProxy: %d, want 303", code)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
