package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// *engine.Service is the Memory the server runs with.
var _ Memory = (*engine.Service)(nil)

// testNow is the fixed clock of the test service.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// testEnv is a server over a real engine.Service and file store, and an
// in-process MCP client connected to it.
type testEnv struct {
	client *client.Client
	dir    string
	init   *mcp.InitializeResult
}

// newEnv starts a server over a fresh data directory. Output schema
// validation is on, so every structured result is checked against the
// schema the tool advertises.
func newEnv(tb testing.TB, opts ...Option) *testEnv {
	tb.Helper()
	return newEnvWith(tb, nil, opts...)
}

// newEnvWith is newEnv over a service built with engine options too
// (a fake language model, say).
func newEnvWith(tb testing.TB, engineOpts []engine.Option, opts ...Option) *testEnv {
	tb.Helper()
	return newEnvCaps(tb, mcp.ClientCapabilities{}, engineOpts, opts...)
}

// newEnvCaps is newEnvWith with a client that declares caps.
func newEnvCaps(tb testing.TB, caps mcp.ClientCapabilities, engineOpts []engine.Option, opts ...Option) *testEnv {
	tb.Helper()
	dir := tb.TempDir()
	store, err := files.Open(dir)
	if err != nil {
		tb.Fatalf("files.Open() error = %v", err)
	}
	tb.Cleanup(func() { store.Close() })
	svc, err := engine.NewService(memory.DefaultConfig(), store, mustCounter(tb),
		append([]engine.Option{engine.WithClock(func() time.Time { return testNow }), engine.WithIDs(sequentialIDs("turn_"))}, engineOpts...)...)
	if err != nil {
		tb.Fatalf("engine.NewService() error = %v", err)
	}
	opts = append(opts, WithServerOptions(server.WithOutputSchemaValidation()))
	return connectWith(tb, NewServer(svc, "test", opts...), dir, caps)
}

// connect starts an in-process client of srv and initializes it.
func connect(tb testing.TB, srv *server.MCPServer, dir string) *testEnv {
	tb.Helper()
	return connectWith(tb, srv, dir, mcp.ClientCapabilities{})
}

// connectWith is connect with a client that declares caps.
func connectWith(tb testing.TB, srv *server.MCPServer, dir string, caps mcp.ClientCapabilities) *testEnv {
	tb.Helper()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		tb.Fatalf("NewInProcessClient() error = %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	ctx := tb.Context()
	if err := c.Start(ctx); err != nil {
		tb.Fatalf("Start() error = %v", err)
	}
	init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "tools-test", Version: "1"},
		Capabilities:    caps,
	}})
	if err != nil {
		tb.Fatalf("Initialize() error = %v", err)
	}
	return &testEnv{client: c, dir: dir, init: init}
}

var (
	counterOnce sync.Once
	counter     *tiktoken.Counter
	counterErr  error
)

// mustCounter returns the cl100k_base token counter, loaded once.
func mustCounter(tb testing.TB) *tiktoken.Counter {
	tb.Helper()
	counterOnce.Do(func() { counter, counterErr = tiktoken.New("cl100k_base") })
	if counterErr != nil {
		tb.Fatalf("tiktoken.New() error = %v", counterErr)
	}
	return counter
}

// sequentialIDs returns an id source yielding prefix + 0001, 0002, ...
func sequentialIDs(prefix string) func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s%04d", prefix, n)
	}
}

// call calls tool with args given as JSON text, exactly as a client would
// send them, and fails the test on a protocol error.
func (e *testEnv) call(tb testing.TB, tool, args string) *mcp.CallToolResult {
	tb.Helper()
	res, err := e.callErr(tb, tool, args)
	if err != nil {
		tb.Fatalf("CallTool(%s, %s) error = %v", tool, args, err)
	}
	return res
}

// callErr is call without the check for a protocol error.
func (e *testEnv) callErr(tb testing.TB, tool, args string) (*mcp.CallToolResult, error) {
	tb.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.RawArguments = json.RawMessage(args)
	return e.client.CallTool(tb.Context(), req)
}

// mustOK calls tool and fails the test unless the result is a success; it
// decodes the structured result into out.
func (e *testEnv) mustOK(tb testing.TB, tool, args string, out any) string {
	tb.Helper()
	res := e.call(tb, tool, args)
	text := resultText(tb, res)
	if res.IsError {
		tb.Fatalf("%s(%s) is an error: %s", tool, args, text)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		tb.Fatalf("marshal structured content: %v", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		tb.Fatalf("decode structured content of %s: %v\n%s", tool, err, raw)
	}
	return text
}

// resultText returns the text of a result's only content item.
func resultText(tb testing.TB, res *mcp.CallToolResult) string {
	tb.Helper()
	if len(res.Content) != 1 {
		tb.Fatalf("result has %d content items, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		tb.Fatalf("result content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// snapshot records every file under dir with its contents.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[rel] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatalf("snapshot %s: %v", dir, err)
	}
	return files
}

// diffSnapshots describes how two snapshots differ, or returns "".
func diffSnapshots(before, after map[string]string) string {
	var diffs []string
	for name, data := range after {
		old, ok := before[name]
		switch {
		case !ok:
			diffs = append(diffs, "created "+name)
		case old != data:
			diffs = append(diffs, "changed "+name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			diffs = append(diffs, "removed "+name)
		}
	}
	return strings.Join(diffs, ", ")
}
