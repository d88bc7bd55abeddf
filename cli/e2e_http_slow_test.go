package cli

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/server"
)

// slowBodyWait bounds how long a test waits for the server to close a
// connection whose body never ends: far past the short http_read_timeout
// the tests configure, so that only a server that never closes it fails.
const slowBodyWait = 45 * time.Second

// slowBody opens a connection to addr, sends a POST to path with the
// extra header lines and a Content-Length of 60000, then only the start
// of the body, and waits for the server to answer or close. It returns
// the status of an answer (0: none) and whether the server closed the
// connection within slowBodyWait.
func slowBody(t *testing.T, addr, path, extra string) (status int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0, false
	}
	defer conn.Close()
	head := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
		"Origin: http://" + addr + "\r\n" + extra + "Content-Length: 60000\r\n\r\ntoken=mnemo_"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Error(err)
		return 0, false
	}
	conn.SetReadDeadline(time.Now().Add(slowBodyWait))
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		status = resp.StatusCode
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return 0, false
	}
	_, err = br.ReadByte()
	var ne net.Error
	return status, err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestE2EHTTPSlowBodies (issue 41, high 1): login forms and viewer forms
// whose bodies stop arriving are cut off at http_read_timeout, on /ui as
// on /mcp; of the unfinished login forms of one address, no more than a
// few are read at once (the others are refused at once), and an
// authenticated client is still served meanwhile. Before the fix every
// such connection was still open when the test gave up waiting.
func TestE2EHTTPSlowBodies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, []string{"MNEMO_HTTP_READ_TIMEOUT=2s"})
	u, err := url.Parse(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + u.Host

	// A browser logged in as alice, for the viewer's own forms.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	req, _ := http.NewRequest(http.MethodPost, base+"/ui/login", strings.NewReader(url.Values{"token": {alice}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie string
	for _, c := range jar.Cookies(mustURL(t, base+"/ui/")) {
		cookie = "Cookie: " + c.Name + "=" + c.Value + "\r\n"
	}
	if cookie == "" {
		t.Fatalf("login with alice's token set no cookie (status %d)", resp.StatusCode)
	}

	const logins = 20
	type outcome struct {
		what   string
		status int
		closed bool
	}
	results := make(chan outcome, logins+2)
	var wg sync.WaitGroup
	for range logins {
		wg.Go(func() {
			status, closed := slowBody(t, u.Host, "/ui/login", "")
			results <- outcome{"unfinished login form", status, closed}
		})
	}
	wg.Go(func() {
		status, closed := slowBody(t, u.Host, "/ui/facts/add", cookie)
		results <- outcome{"alice's unfinished viewer form", status, closed}
	})
	wg.Go(func() {
		status, closed := slowBody(t, u.Host, "/ui/facts/add", "")
		results <- outcome{"unfinished viewer form without a login", status, closed}
	})
	// Meanwhile an authenticated MCP client is served.
	c := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	if _, err := c.ListTools(t.Context(), mcp.ListToolsRequest{}); err != nil {
		t.Errorf("tools/list while the slow bodies are open: %v", err)
	}
	wg.Wait()
	close(results)
	refused := 0
	for o := range results {
		if !o.closed {
			t.Errorf("%s: still open after %s (status %d); want it closed past http_read_timeout (2s)", o.what, slowBodyWait, o.status)
		}
		if o.what == "unfinished login form" && o.status == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused < logins-server.UILoginConcurrent {
		t.Errorf("%d of %d unfinished login forms of one address refused at once, want at least %d (at most %d read at once)", refused, logins, logins-server.UILoginConcurrent, server.UILoginConcurrent)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
