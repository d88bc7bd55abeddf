package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// The MCP citizen tests (issue 29) drive the real binary the way a host
// does: it sets a log level and reads notifications/message, asks for
// progress on flush_memory, answers the question before everything is
// forgotten, and (over HTTP, citizen_http_test.go) listens for resource
// updates with protocol 2026-07-28.

// inbox keeps what a server sends, in arrival order.
type inbox struct {
	mu      sync.Mutex
	msgs    []rpcMessage
	arrived chan struct{} // closed and replaced on each message
}

func newInbox() *inbox { return &inbox{arrived: make(chan struct{})} }

func (b *inbox) add(m rpcMessage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, m)
	close(b.arrived)
	b.arrived = make(chan struct{})
}

// await returns the index of the first message that match accepts, waiting
// for it as long as the test's context lasts.
func (b *inbox) await(ctx context.Context, t *testing.T, what string, match func(rpcMessage) bool) int {
	t.Helper()
	for {
		b.mu.Lock()
		for i, m := range b.msgs {
			if match(m) {
				b.mu.Unlock()
				return i
			}
		}
		arrived := b.arrived
		b.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			t.Fatalf("no %s arrived: %v", what, ctx.Err())
		}
	}
}

// all returns the messages that match accepts.
func (b *inbox) all(match func(rpcMessage) bool) []rpcMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []rpcMessage
	for _, m := range b.msgs {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// logData is the data of a notifications/message from mnemo.
type logData struct {
	Level  string `json:"level"`
	Logger string `json:"logger"`
	Data   struct {
		Message string `json:"message"`
		Scope   string `json:"scope"`
		Fact    string `json:"fact"`
	} `json:"data"`
}

// logNote decodes m when it is a notifications/message.
func logNote(m rpcMessage) (logData, bool) {
	var d logData
	if m.Method != "notifications/message" || json.Unmarshal(m.Params, &d) != nil {
		return d, false
	}
	return d, true
}

// factSavedLog matches the log record of saving fact id.
func factSavedLog(id string) func(rpcMessage) bool {
	return func(m rpcMessage) bool {
		d, ok := logNote(m)
		return ok && d.Data.Message == "fact saved" && d.Data.Fact == id
	}
}

// blockingLLM is a fake model that answers no chat completion until
// release is closed (or the test ends): a flush waits on it, so there is
// progress to report before its result.
func blockingLLM(ctx context.Context, t *testing.T) (llm *openaitest.Server, release func()) {
	gate := make(chan struct{})
	model := codewordModel(t, func(w string, _ int64) string { return "The user's project is called " + w }, nil)
	llm = openaitest.NewServer(t)
	llm.ChatFunc = func(r openaitest.ChatRequest) openaitest.Reply {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return model(r)
	}
	return llm, sync.OnceFunc(func() { close(gate) })
}

// TestE2EStdioCitizen: over stdio, logging/setLevel filters what
// notifications/message carries; a flush_memory with a progressToken
// reports progress while the model works, before its result; and a forget
// of everything asks the user through elicitation and obeys a decline.
func TestE2EStdioCitizen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	llm, release := blockingLLM(ctx, t)
	defer release()
	srv := startServer(t, t.TempDir(), "MNEMO_LLM_BASE_URL="+llm.URL, "MNEMO_LLM_API_KEY=sk-test", "MNEMO_LLM_MODEL=fake",
		"MNEMO_DEBOUNCE_SECONDS=300")
	box := newInbox()
	var answer atomic.Value // the host's answer to a question: {"result": …} or {"error": …}
	answer.Store(map[string]any{"result": map[string]any{"action": "decline"}})
	srv.handle(func(m rpcMessage) {
		if m.Method == "elicitation/create" && len(m.ID) > 0 {
			reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
			for k, v := range answer.Load().(map[string]any) {
				reply[k] = v
			}
			if err := srv.send(reply); err != nil {
				t.Error(err)
			}
		}
		box.add(m)
	})
	if _, err := srv.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "mnemo-e2e-host", "version": "1"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}

	save := func(content string) string {
		t.Helper()
		var res struct{ Fact struct{ ID string } }
		if err := srv.tool(ctx, "save_memory", map[string]any{"content": content, "category": "preference"}, &res); err != nil {
			t.Fatal(err)
		}
		return res.Fact.ID
	}
	setLevel := func(level string) {
		t.Helper()
		if _, err := srv.call(ctx, "logging/setLevel", map[string]any{"level": level}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("setLevel filters notifications/message", func(t *testing.T) {
		quiet := save("Prefers tabs over spaces") // before any setLevel: warnings and up only
		setLevel("info")
		first := save("Prefers metric units")
		setLevel("error")
		muted := save("Prefers dark themes")
		setLevel("info")
		last := save("Prefers short answers")
		box.await(ctx, t, "log of the last fact saved", factSavedLog(last))
		// One stream, in order: what was filtered before the last record
		// arrived is never sent.
		if len(box.all(factSavedLog(first))) != 1 {
			t.Errorf("no notifications/message for %s saved at level info", first)
		}
		for _, id := range []string{quiet, muted} {
			if got := box.all(factSavedLog(id)); len(got) != 0 {
				t.Errorf("notifications/message for %s = %s, want none (filtered by the level)", id, got[0].Params)
			}
		}
		for _, m := range box.all(func(m rpcMessage) bool { _, ok := logNote(m); return ok }) {
			d, _ := logNote(m)
			if d.Logger != "mnemo" || d.Level == "debug" || strings.Contains(string(m.Params), "Prefers") {
				t.Errorf("notifications/message = %s, want logger mnemo, level info or above, no memory content", m.Params)
			}
		}
	})

	t.Run("flush_memory reports progress before its result", func(t *testing.T) {
		for i, w := range []string{"codeword-alder", "codeword-birch"} {
			var added addResult
			if err := srv.tool(ctx, "add_memory", map[string]any{
				"user_input": fmt.Sprintf("My project is %s.", w), "agent_response": "Noted.", "thread_id": fmt.Sprintf("t%d", i),
			}, &added); err != nil {
				t.Fatal(err)
			}
		}
		type flushOut struct {
			raw json.RawMessage
			err error
		}
		done := make(chan flushOut, 1)
		go func() {
			raw, err := srv.call(ctx, "tools/call", map[string]any{
				"name": "flush_memory", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "flush-1"},
			})
			done <- flushOut{raw, err}
		}()
		i := box.await(ctx, t, "notifications/progress", func(m rpcMessage) bool {
			return m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"flush-1"`)
		})
		var p struct {
			Progress, Total float64
			Message         string
		}
		json.Unmarshal(box.all(func(rpcMessage) bool { return true })[i].Params, &p)
		if p.Progress != 0 || p.Total != 2 || !strings.Contains(p.Message, "updating memory from thread") {
			t.Errorf("first progress = %+v, want 0 of 2 turns, updating memory from thread …", p)
		}
		select {
		case out := <-done:
			t.Fatalf("flush_memory answered while the model was still working: %s %v", out.raw, out.err)
		default:
		}
		release()
		out := <-done
		if out.err != nil {
			t.Fatal(out.err)
		}
		var res struct {
			StructuredContent struct {
				TurnsProcessed int `json:"turns_processed"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(out.raw, &res); err != nil || res.StructuredContent.TurnsProcessed != 2 {
			t.Fatalf("flush_memory = %s, want 2 turns processed", out.raw)
		}
		answered := box.await(ctx, t, "flush_memory result", func(m rpcMessage) bool {
			return m.Result != nil && strings.Contains(string(m.Result), `"turns_processed"`)
		})
		if i > answered {
			t.Errorf("progress arrived at message %d, the result at %d: want progress first", i, answered)
		}
	})

	t.Run("forget everything asks the user and obeys a decline", func(t *testing.T) {
		forgetAll := func() (isError bool, text string, structured json.RawMessage) {
			t.Helper()
			raw, err := srv.call(ctx, "tools/call", map[string]any{
				"name": "forget_memory", "arguments": map[string]any{"all": true, "confirm": "forget everything"},
			})
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				IsError           bool `json:"isError"`
				Content           []struct{ Text string }
				StructuredContent json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
				t.Fatalf("forget_memory = %s (%v)", raw, err)
			}
			return res.IsError, res.Content[0].Text, res.StructuredContent
		}
		isErr, text, _ := forgetAll()
		asked := box.all(func(m rpcMessage) bool { return m.Method == "elicitation/create" })
		if len(asked) != 1 || !strings.Contains(string(asked[0].Params), "Forget everything remembered about") {
			t.Fatalf("elicitation/create requests = %d (%v), want 1 asking to forget everything", len(asked), asked)
		}
		if !isErr || !strings.Contains(text, "not confirmed") || !strings.Contains(text, "decline") {
			t.Errorf("forget_memory after a decline = %v %q, want an error result saying nothing was deleted", isErr, text)
		}
		var listed struct {
			Facts []struct{ ID string } `json:"facts"`
		}
		if err := srv.tool(ctx, "list_memories", map[string]any{"kind": "facts"}, &listed); err != nil || len(listed.Facts) < 4 {
			t.Fatalf("facts after a declined forget = %d (%v), want the 4 saved still there", len(listed.Facts), err)
		}

		answer.Store(map[string]any{"error": map[string]any{"code": -32603, "message": "the host's dialog failed"}})
		isErr, text, _ = forgetAll()
		if !isErr || !strings.Contains(text, "could not be asked") {
			t.Errorf("forget_memory when the question failed = %v %q, want an error result, nothing deleted", isErr, text)
		}
		if err := srv.tool(ctx, "list_memories", map[string]any{"kind": "facts"}, &listed); err != nil || len(listed.Facts) < 4 {
			t.Fatalf("facts after a failed question = %d (%v), want the 4 saved still there", len(listed.Facts), err)
		}

		answer.Store(map[string]any{"result": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
		isErr, text, structured := forgetAll()
		if isErr || !strings.Contains(string(structured), `"scope_forgotten":true`) {
			t.Errorf("forget_memory after the user accepted = %v %q %s, want everything forgotten", isErr, text, structured)
		}
	})
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
}

// TestE2EStdioModern: a client of protocol 2026-07-28 over stdio sends no
// initialize; it gets resources/updated on its subscriptions/listen
// stream, tagged with the stream's id, for the URIs it named; and a forget
// of everything answers input_required with the question, which a decline
// answers with nothing deleted.
func TestE2EStdioModern(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := startServer(t, t.TempDir())
	box := newInbox()
	srv.handle(box.add)
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mnemo-e2e-modern", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	if _, err := srv.call(ctx, "server/discover", map[string]any{"_meta": meta}); err != nil {
		t.Fatal(err)
	}
	go srv.call(ctx, "subscriptions/listen", map[string]any{"_meta": meta, "notifications": map[string]any{
		"resourceSubscriptions": []string{"mnemo://memory/facts.json"}}})
	box.await(ctx, t, "subscriptions acknowledged", func(m rpcMessage) bool {
		return m.Method == "notifications/subscriptions/acknowledged"
	})
	if _, err := srv.call(ctx, "tools/call", map[string]any{"_meta": meta, "name": "save_memory",
		"arguments": map[string]any{"content": "Prefers green tea"}}); err != nil {
		t.Fatal(err)
	}
	box.await(ctx, t, "tagged resources/updated of mnemo://memory/facts.json", func(m rpcMessage) bool {
		var p struct {
			Meta map[string]any `json:"_meta"`
			URI  string         `json:"uri"`
		}
		return m.Method == "notifications/resources/updated" && json.Unmarshal(m.Params, &p) == nil &&
			p.URI == "mnemo://memory/facts.json" && p.Meta["io.modelcontextprotocol/subscriptionId"] != nil
	})

	forget := map[string]any{"_meta": meta, "name": "forget_memory", "arguments": map[string]any{"all": true}}
	raw, err := srv.call(ctx, "tools/call", forget)
	if err != nil {
		t.Fatal(err)
	}
	var asked struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if json.Unmarshal(raw, &asked) != nil || asked.ResultType != "input_required" || len(asked.InputRequests) != 1 {
		t.Fatalf("forget_memory all = %s, want input_required with one question", raw)
	}
	responses := map[string]any{}
	for id := range asked.InputRequests {
		responses[id] = map[string]any{"action": "decline"}
	}
	forget["inputResponses"] = responses
	forget["requestState"] = asked.RequestState // echoed verbatim, as the revision asks
	raw, err = srv.call(ctx, "tools/call", forget)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"isError":true`) || !strings.Contains(string(raw), "not confirmed") {
		t.Errorf("forget_memory after a decline = %s, want an error result, nothing deleted", raw)
	}
	raw, err = srv.call(ctx, "tools/call", map[string]any{"_meta": meta, "name": "list_memories", "arguments": map[string]any{"kind": "facts"}})
	if err != nil || !strings.Contains(string(raw), "Prefers green tea") {
		t.Errorf("list_memories after a declined forget = %s (%v), want the fact kept", raw, err)
	}
	srv.stop()
}
