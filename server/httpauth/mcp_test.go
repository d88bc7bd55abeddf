package httpauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/tools"
)

// TestStreamableHTTPCaller runs the real MCP server over mcp-go's stateless
// Streamable HTTP transport behind Authenticate, wired as the example
// says, and checks that the token decides whose memory a call uses.
func TestStreamableHTTPCaller(t *testing.T) {
	dir := t.TempDir()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, counter)
	if err != nil {
		t.Fatal(err)
	}
	mcpHTTP := server.NewStreamableHTTPServer(tools.NewServer(svc, "test"),
		server.WithStateLess(true),
		server.WithHTTPContextFunc(func(ctx context.Context, _ *http.Request) context.Context {
			if id, ok := httpauth.IdentityFrom(ctx); ok {
				ctx = tools.WithCaller(ctx, tools.Caller{User: id.User, Agent: id.Agent})
			}
			return ctx
		}))

	tokens := httpauth.NewTokenFile(dir + "/" + httpauth.TokensFileName)
	alice, _, err := tokens.Add("alice", "")
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	resource := ts.URL + "/mcp"
	mdURL, _ := httpauth.MetadataURL(resource)
	authenticate, err := httpauth.Authenticate(httpauth.AuthOptions{
		Verifiers: []httpauth.Verifier{httpauth.NewTokenVerifier(tokens.Path())}, ResourceMetadataURL: mdURL})
	if err != nil {
		t.Fatal(err)
	}
	origins, err := httpauth.AllowedOrigins(strings.TrimPrefix(ts.URL, "http://"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	handler = httpauth.Chain(mcpHTTP, httpauth.CheckHostOrigin(origins), authenticate, httpauth.LimitBody(1<<20))

	c, err := client.NewStreamableHttpClient(resource, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + alice}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatalf("Initialize() error = %v", err)
	}
	call := func(tool, args string) *mcp.CallToolResult {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = tool
		req.Params.RawArguments = json.RawMessage(args)
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("CallTool(%s) error = %v", tool, err)
		}
		return res
	}
	res := call("save_memory", `{"content": "Likes tea"}`)
	if res.IsError || !strings.Contains(mustJSON(res.StructuredContent), `"user_id":"alice"`) {
		t.Errorf("save_memory as alice = %s, want it in alice's memory", mustJSON(res))
	}
	res = call("retrieve_memory", `{"query": "tea", "user_id": "bob"}`)
	if !res.IsError || !strings.Contains(mustJSON(res.Content), `cannot use the memory of \"bob\"`) {
		t.Errorf("retrieve_memory naming bob = %s, want a refusal", mustJSON(res))
	}

	// Without a token the transport refuses before MCP.
	resp, err := http.Post(resource, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("no token: status %d, WWW-Authenticate %q; want 401 with resource_metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
