package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// connHarness runs serveStdio over pipes, as a host's stdio would.
type connHarness struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startConn(t *testing.T, s *server.MCPServer) *connHarness {
	t.Helper()
	return startConnCtx(t, context.Background(), s)
}

func startConnCtx(t *testing.T, ctx context.Context, s *server.MCPServer) *connHarness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &connHarness{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		h.done <- serveStdio(ctx, s, newStdioGuard(inR, &lockedWriter{w: outW}, 1<<20), &lockedWriter{w: outW}, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return h
}

func (h *connHarness) send(line string) {
	h.t.Helper()
	if _, err := h.in.Write([]byte(line + "\n")); err != nil {
		h.t.Fatalf("write %q: %v", line, err)
	}
}

// read returns the next line the server writes, as a map and as text.
func (h *connHarness) read() (map[string]any, string) {
	h.t.Helper()
	type got struct {
		line string
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		l, err := h.out.ReadString('\n')
		ch <- got{l, err}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			h.t.Fatalf("read: %v", g.err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(g.line), &m); err != nil {
			h.t.Fatalf("server wrote %q, not JSON: %v", g.line, err)
		}
		return m, strings.TrimSpace(g.line)
	case <-time.After(10 * time.Second):
		h.t.Fatal("no answer within 10s")
		return nil, ""
	}
}

func (h *connHarness) initialize(caps string) {
	h.t.Helper()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`)
	if m, line := h.read(); m["result"] == nil {
		h.t.Fatalf("initialize answered %s", line)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func testServer(tools ...server.ServerTool) *server.MCPServer {
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false), server.WithElicitation())
	s.AddTools(tools...)
	return s
}

func tool(name string, h server.ToolHandlerFunc) server.ServerTool {
	return server.ServerTool{Tool: mcp.NewTool(name), Handler: h}
}

// TestStdioConnIDsAndErrors checks what a client reads back: ids exactly
// as sent, a parse error for a line that is not JSON, a panicking tool
// answered with an internal error under its id.
func TestStdioConnIDsAndErrors(t *testing.T) {
	h := startConn(t, testServer(
		tool("echo", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("said " + req.GetString("x", "")), nil
		}),
		tool("boom", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			panic("kaput")
		}),
	))
	h.initialize(`{}`)
	h.send(`{"jsonrpc":"2.0","id":"a\u0062\"c","method":"tools/call","params":{"name":"echo","arguments":{"x":"hi"}}}`)
	m, line := h.read()
	if m["id"] != `ab"c` || !strings.Contains(line, "said hi") {
		t.Errorf("echo answered %s, want id ab\"c and the text", line)
	}
	h.send(`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`)
	if _, line := h.read(); !strings.Contains(line, `"id":9007199254740991,`) {
		t.Errorf("ping answered %s, want the id exactly as sent", line)
	}
	h.send(`not json`)
	m, line = h.read()
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(mcp.PARSE_ERROR) || m["id"] != nil {
		t.Errorf("garbage answered %s, want a parse error with id null", line)
	}
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"boom"}}`)
	m, line = h.read()
	if e, _ := m["error"].(map[string]any); e == nil || m["id"] != float64(7) || !strings.Contains(line, "kaput") {
		t.Errorf("panicking tool answered %s, want an error for id 7", line)
	}
	h.send(`{"jsonrpc":"2.0","id":8,"method":"no/such"}`)
	if m, line := h.read(); m["error"] == nil || m["id"] != float64(8) {
		t.Errorf("unknown method answered %s, want an error for id 8", line)
	}
	h.in.Close()
	if err := <-h.done; err != nil {
		t.Errorf("serve ended with %v, want nil at the end of input", err)
	}
}

// TestStdioConnSlowRequestDoesNotBlock checks that a request that runs
// long (served on the reading goroutine at first) does not hold up the
// next ones, and that the end of input cancels it and waits for it.
func TestStdioConnSlowRequestDoesNotBlock(t *testing.T) {
	ended := make(chan struct{})
	h := startConn(t, testServer(
		tool("wait", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer close(ended)
			<-ctx.Done()
			return mcp.NewToolResultText("cancelled"), nil
		}),
	))
	h.initialize(`{}`)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m, line := h.read(); m["id"] != float64(2) {
		t.Fatalf("first answer %s, want the ping's while the tool waits", line)
	}
	h.in.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the end of input did not cancel the waiting tool")
	}
	if m, line := h.read(); m["id"] != float64(1) {
		t.Errorf("last answer %s, want the cancelled tool's", line)
	}
	if err := <-h.done; err != nil {
		t.Errorf("serve ended with %v", err)
	}
}

// TestStdioConnElicitation checks a tool that asks the user within its
// call: the question reaches the client, and the client's answer, read
// while the tool waits, reaches the tool.
func TestStdioConnElicitation(t *testing.T) {
	var srv *server.MCPServer
	srv = testServer(tool("ask", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message:         "sure?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
		}})
		if err != nil {
			return mcp.NewToolResultError("ask failed: " + err.Error()), nil
		}
		return mcp.NewToolResultText("user said " + string(res.Action)), nil
	}))
	h := startConn(t, srv)
	h.initialize(`{"elicitation":{}}`)
	for round, answer := range []string{
		`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"ok":true}}}`,
		`{"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"no user here"}}`,
	} {
		h.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"ask"}}`)
		q, line := h.read()
		if q["method"] != string(mcp.MethodElicitationCreate) || q["id"] == nil {
			t.Fatalf("round %d: server wrote %s, want an elicitation/create request", round, line)
		}
		id, _ := json.Marshal(q["id"])
		// An answer to a question never asked is dropped, not taken.
		h.send(`{"jsonrpc":"2.0","id":123456,"result":{"action":"decline"}}`)
		h.send(strings.Replace(answer, "%s", string(id), 1))
		m, line := h.read()
		want := "user said accept"
		if round == 1 {
			want = "no user here"
		}
		if m["id"] != "call" || !strings.Contains(line, want) {
			t.Errorf("round %d: tool answered %s, want %q", round, line, want)
		}
	}
	// Reading went on after each question: the connection still answers.
	h.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if m, line := h.read(); m["id"] != float64(5) {
		t.Errorf("ping after the questions answered %s", line)
	}
}

// TestStdioConnSignal checks a shutdown by signal (the context ends):
// the running request is cancelled and awaited, and serve returns the
// context's error while stdin stays open.
func TestStdioConnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	h := startConnCtx(t, ctx, testServer(
		tool("wait", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			return mcp.NewToolResultText("cancelled"), nil
		}),
	))
	h.initialize(`{}`)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}`)
	<-started
	cancel()
	if m, line := h.read(); m["id"] != float64(1) {
		t.Errorf("answer %s, want the cancelled tool's", line)
	}
	select {
	case err := <-h.done:
		if err != context.Canceled {
			t.Errorf("serve ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not end after the context was cancelled")
	}
}
