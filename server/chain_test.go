package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/tools"
)

// TestEveryRouteSharesTheChain (issue 43): every route of serve --http —
// the MCP endpoint, the viewer's pages, its login form and log-out, the
// metadata document, the probes and an unknown path — passes the one
// chain: a declared body over http_max_body_bytes is answered 413 before
// the route reads any of it, whoever sends it, and every request is in
// the access log once. Before chain.go, /ui was mounted outside /mcp's
// body limit: its login form read the body and answered 401, its pages
// their own 401, and the probes 200.
func TestEveryRouteSharesTheChain(t *testing.T) {
	const limit = 1024
	dir := t.TempDir()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tokens, err := tiktoken.NewLazy("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, tokens, engine.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })

	hc := DefaultHTTPConfig()
	hc.MaxBodyBytes = limit
	cfg := Config{Memory: memory.DefaultConfig(), HTTP: hc, DataDir: dir, Version: "test"}
	key := bytes.Repeat([]byte{7}, uiKeySize)
	srv := httptest.NewUnstartedServer(nil)
	bound := srv.Listener.Addr().String()
	verifier, where, _ := tokenVerifier(dir, store)
	opts := httpOptions{addr: bound, tokens: verifier, where: where}
	resource := "http://" + bound + MCPPath
	mcpServer := tools.NewServer(svc, cfg.Version, tools.WithStatelessHTTP(), tools.WithAuthenticatedCallers())
	stack, err := httpHandler(mcpServer, cfg, opts, bound, resource, log, func(mux *http.ServeMux, verifiers []httpauth.Verifier) error {
		return mountUI(mux, svc, store, cfg, newUILogin(verifiers, key, false, false, log), key, log)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = stack.handler(func(context.Context) error { return nil })
	srv.Start()
	t.Cleanup(srv.Close)

	for _, path := range []string{MCPPath, uiPath + "/", uiPath + "/login", uiPath + "/logout", uiPath + "/import", uiPath + "/facts",
		httpauth.MetadataPath, httpauth.MetadataPath + MCPPath, healthzPath, readyzPath, "/nowhere"} {
		t.Run(path, func(t *testing.T) {
			logged.Reset()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path,
				strings.NewReader("token="+strings.Repeat("x", limit)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", srv.URL)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body.String(), "request body too large: at most 1024 bytes") {
				t.Errorf("POST %s with a %d-byte body = %d %q, want 413 (http_max_body_bytes is %d)", path, req.ContentLength, resp.StatusCode, body.String(), limit)
			}
			if n := strings.Count(logged.String(), "path="+path+" "); n != 1 {
				t.Errorf("POST %s is in the access log %d times, want once:\n%s", path, n, logged.String())
			}
		})
	}
}
