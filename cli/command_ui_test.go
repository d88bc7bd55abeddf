package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
)

// viewer is a running "mnemo ui", started in-process through Run.
type viewer struct {
	url  string // with its one-time token
	base string // http://127.0.0.1:PORT
	stop func() int
}

var viewerURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)

// startViewer runs "mnemo ui" on dataDir until the test ends (or stop).
func startViewer(t *testing.T, dataDir string, args ...string) *viewer {
	t.Helper()
	return startViewerEnv(t, env{"MNEMO_DATA_DIR": dataDir, "HOME": t.TempDir()}, args...)
}

// startViewerEnv runs "mnemo ui" with the environment e until the test
// ends (or stop).
func startViewerEnv(t *testing.T, e env, args ...string) *viewer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr testutil.LockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, append([]string{"ui"}, args...), e.get, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := viewerURL.FindString(sc.Text()); m != "" {
				found <- m
			}
		}
		close(found)
	}()
	v := &viewer{}
	exited := -1
	v.stop = func() int {
		if exited < 0 {
			cancel()
			exited = <-code
		}
		return exited
	}
	t.Cleanup(func() { v.stop() })
	u, ok := <-found
	if !ok {
		t.Fatalf("mnemo ui printed no URL; exit %d, stderr:\n%s", v.stop(), stderr.String())
	}
	v.url = u
	v.base = u[:strings.Index(u, "/?")]
	return v
}

func TestUICommandFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--port", "70000"}, "is not a port"},
		{[]string{"ui", "--port", "x"}, "not a whole number"},
		{[]string{"ui", "--user", "../x"}, "user_id"},
		{[]string{"ui", "extra"}, "unexpected argument"},
	} {
		code, _, stderr := runEnv(t, env{"MNEMO_DATA_DIR": t.TempDir(), "HOME": t.TempDir()}, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("mnemo %v = %d, %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestUICommandServes logs in with the printed link through a real HTTP
// client and checks what is refused without it.
func TestUICommandServes(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	v := startViewer(t, dir, "--user", "ana")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}

	if res := mustGet(t, http.DefaultClient, v.base+"/facts"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without the token = %d, want 401", res.StatusCode)
	}
	res := mustGet(t, c, v.url)
	body := readAll(t, res)
	if res.StatusCode != http.StatusOK || res.Request.URL.RawQuery != "" || !strings.Contains(body, "Backend engineer at a logistics startup") {
		t.Fatalf("GET %s = %d at %s, want ana's profile without the token in the address:\n%s", v.url, res.StatusCode, res.Request.URL, body)
	}
	if res := mustGet(t, &http.Client{}, v.url); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of the link = %d, want 401 (it works once)", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", v.base+"/facts", nil)
	req.Header.Set("Origin", "http://evil.test")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin = %v %v, want 403", res.StatusCode, err)
	}
	req, _ = http.NewRequest("GET", v.base+"/facts", nil)
	req.Host = "rebound.evil.test"
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host = %v %v, want 403", res.StatusCode, err)
	}
	if code := v.stop(); code != exitOK {
		t.Errorf("mnemo ui exit code after cancel = %d, want 0", code)
	}
}

// TestUIExportImport exports a user through the viewer and imports the
// file through another viewer, with the code of mnemo export and import.
func TestUIExportImport(t *testing.T) {
	src := t.TempDir()
	seedRich(t, src)
	v := startViewer(t, src)
	c := loggedIn(t, v)
	res := mustGet(t, c, v.base+"/export?user=ana")
	export := readAll(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(export, `"format": "mnemo-export"`) {
		t.Fatalf("export = %d:\n%.300s", res.StatusCode, export)
	}

	dst := t.TempDir()
	v2 := startViewer(t, dst)
	c2 := loggedIn(t, v2)
	upload := func(user string) (int, string) {
		csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(readAll(t, mustGet(t, c2, v2.base+"/data")))[1]
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("csrf", csrf)
		mw.WriteField("target_user", user)
		fw, _ := mw.CreateFormFile("file", "export.json")
		io.WriteString(fw, export)
		mw.Close()
		req, _ := http.NewRequest("POST", v2.base+"/import", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Origin", v2.base)
		res, err := c2.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, readAll(t, res)
	}
	if code, body := upload("bea"); code != http.StatusOK || !strings.Contains(body, "The import is done") || !strings.Contains(body, "Backend engineer") {
		t.Fatalf("import = %d:\n%s", code, body)
	}
	if code, body := upload("bea"); code != http.StatusBadRequest || !strings.Contains(body, "already holds memory") {
		t.Errorf("second import into bea = %d, want 400 'already holds memory':\n%s", code, body)
	}
	got := loadAll(t, dst)
	want := loadAll(t, src)
	if len(got[memory.Scope{UserID: "bea"}].Turns) != len(want[memory.Scope{UserID: "ana"}].Turns) ||
		len(got[memory.Scope{UserID: "bea", AgentName: "coder"}].Turns) != len(want[memory.Scope{UserID: "ana", AgentName: "coder"}].Turns) {
		t.Errorf("imported scopes = %v, want ana's two scopes under bea", got)
	}
}

// loggedIn is an HTTP client logged in to v with its link.
func loggedIn(t *testing.T, v *viewer) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	if res := mustGet(t, c, v.url); res.StatusCode != http.StatusOK {
		t.Fatalf("login = %d", res.StatusCode)
	}
	u, _ := url.Parse(v.base)
	if len(jar.Cookies(u)) != 1 {
		t.Fatalf("login left cookies %v, want one", jar.Cookies(u))
	}
	return c
}

func mustGet(t *testing.T, c *http.Client, u string) *http.Response {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
