package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// openStream opens the notification stream of protocol 2025-06-18 (an
// HTTP GET) as token's holder and feeds what it carries to a new inbox. It
// returns once the server answered, which it does after registering the
// stream.
func openStream(t *testing.T, url, token string) *inbox {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion20250618)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET %s = %d, want 200", url, resp.StatusCode)
	}
	box := newInbox()
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m rpcMessage
				if json.Unmarshal([]byte(data), &m) == nil {
					box.add(m)
				}
			}
		}
	}()
	return box
}

// notesTo feeds the notifications c receives to a new inbox.
func notesTo(c *client.Client) *inbox {
	box := newInbox()
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		params, _ := json.Marshal(n.Params)
		box.add(rpcMessage{JSONRPC: "2.0", Method: n.Method, Params: params})
	})
	return box
}

// userAnswer is a host's elicitation handler: it gives one answer and
// counts the questions.
type userAnswer struct {
	action mcp.ElicitationResponseAction
	asked  atomic.Int32
}

func (u *userAnswer) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	u.asked.Add(1)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: u.action}}, nil
}

// modernClient is an mcp-go client of protocol 2026-07-28 holding token,
// answering questions with user.
func modernClient(t *testing.T, url, token string, user *userAnswer) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20260728), client.WithElicitationHandler(user))
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "e2e-modern", Version: "1"}}})
	if err != nil {
		t.Fatalf("Initialize() error = %v", err)
	}
	if res.ProtocolVersion != mcp.ProtocolVersion20260728 {
		t.Fatalf("negotiated protocol %s, want %s", res.ProtocolVersion, mcp.ProtocolVersion20260728)
	}
	return c
}

// TestE2EHTTPCitizen: over serve --http with two users' tokens, a client
// of 2025-06-18 sets its level and gets on its notification stream only
// the records of its own memory at that level; flush_memory with a
// progressToken reports progress on the call's stream before its result;
// a client of 2026-07-28 gets resources/updated through
// subscriptions/listen for its own scopes only, and is asked (a
// multi-round-trip request) before everything is forgotten, which a
// decline stops; a client of 2025-06-18 over stateless HTTP keeps to the
// confirm phrase.
func TestE2EHTTPCitizen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	token := func(user string) string {
		t.Helper()
		out, err := mnemoCmd(t, dir, nil, "token", "add", "--user", user).Output()
		if err != nil {
			t.Fatalf("mnemo token add --user %s: %v", user, err)
		}
		return strings.TrimSpace(string(out))
	}
	alice, bob := token("alice"), token("bob")
	llm, release := blockingLLM(ctx, t)
	defer release()
	srv := startHTTP(t, dir, []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=sk-test", "MNEMO_LLM_MODEL=fake",
		"MNEMO_DEBOUNCE_SECONDS=300", "MNEMO_LOG_LEVEL=debug"})
	ac := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	bc := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + bob})
	save := func(c *client.Client, content string) string {
		t.Helper()
		res := callHTTPTool(t, c, "save_memory", map[string]any{"content": content, "category": "preference"})
		var out struct{ Fact struct{ ID string } }
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError || json.Unmarshal(b, &out) != nil || out.Fact.ID == "" {
			t.Fatalf("save_memory = %s", resultText(res))
		}
		return out.Fact.ID
	}
	setLevel := func(c *client.Client, level mcp.LoggingLevel) {
		t.Helper()
		//lint:ignore SA1019 deprecated from 2026-07-28 on; this plays a client of 2025-06-18, which sends it
		if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
			t.Fatalf("SetLevel(%s) error = %v", level, err)
		}
	}

	t.Run("setLevel filters the stream, which carries only the caller's records", func(t *testing.T) {
		stream := openStream(t, srv.url, alice)
		quiet := save(ac, "Prefers tabs") // default level: warnings and up
		setLevel(ac, mcp.LoggingLevelInfo)
		others := save(bc, "Prefers spaces") // bob's memory: never on alice's stream
		first := save(ac, "Prefers metric units")
		setLevel(ac, mcp.LoggingLevelError)
		muted := save(ac, "Prefers dark themes")
		setLevel(ac, mcp.LoggingLevelInfo)
		last := save(ac, "Prefers short answers")
		stream.await(ctx, t, "log of the last fact saved", factSavedLog(last))
		if len(stream.all(factSavedLog(first))) != 1 {
			t.Errorf("no notifications/message for %s saved at level info", first)
		}
		for _, id := range []string{quiet, muted, others} {
			if got := stream.all(factSavedLog(id)); len(got) != 0 {
				t.Errorf("notifications/message for %s = %s, want none", id, got[0].Params)
			}
		}
		for _, m := range stream.all(func(m rpcMessage) bool { _, ok := logNote(m); return ok }) {
			if d, _ := logNote(m); d.Data.Scope != "" && d.Data.Scope != "alice" || strings.Contains(string(m.Params), "bob") {
				t.Errorf("alice's stream carried %s", m.Params)
			}
		}
	})

	t.Run("flush_memory reports progress before its result", func(t *testing.T) {
		for _, w := range []string{"codeword-alder", "codeword-birch"} {
			if res := callHTTPTool(t, ac, "add_memory", map[string]any{"user_input": "My project is " + w + ".", "agent_response": "Noted."}); res.IsError {
				t.Fatal(resultText(res))
			}
		}
		notes := notesTo(ac)
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			var req mcp.CallToolRequest
			req.Params.Name = "flush_memory"
			req.Params.Arguments = map[string]any{}
			req.Params.Meta = &mcp.Meta{ProgressToken: "flush-http"}
			res, err := ac.CallTool(ctx, req)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		notes.await(ctx, t, "notifications/progress", func(m rpcMessage) bool {
			return m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"flush-http"`)
		})
		select {
		case res := <-done:
			t.Fatalf("flush_memory answered while the model was still working: %s", resultText(res))
		default:
		}
		release()
		res := <-done
		if res == nil || res.IsError || !strings.Contains(resultText(res), `"turns_processed":2`) {
			t.Fatalf("flush_memory = %s, want 2 turns processed", resultText(res))
		}
	})

	t.Run("2026-07-28: resources/updated through subscriptions/listen, own scopes only", func(t *testing.T) {
		mc := modernClient(t, srv.url, alice, &userAnswer{action: mcp.ElicitationResponseActionDecline})
		notes := notesTo(mc)
		stop, err := mc.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{
			"mnemo://memory/facts.json", "mnemo://memory/alice/facts.json", "mnemo://memory/bob/facts.json",
		}}, func(err error) { t.Errorf("subscriptions/listen: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		notes.await(ctx, t, "subscriptions acknowledged", func(m rpcMessage) bool {
			return m.Method == string(mcp.MethodNotificationSubscriptionsAcknowledged)
		})
		save(bc, "Prefers tea")
		save(ac, "Prefers coffee")
		updated := func(uri string) func(rpcMessage) bool {
			return func(m rpcMessage) bool {
				return m.Method == string(mcp.MethodNotificationResourceUpdated) && strings.Contains(string(m.Params), `"`+uri+`"`)
			}
		}
		notes.await(ctx, t, "resources/updated of alice's facts", updated("mnemo://memory/alice/facts.json"))
		notes.await(ctx, t, "resources/updated of the caller's own facts", updated("mnemo://memory/facts.json"))
		if got := notes.all(updated("mnemo://memory/bob/facts.json")); len(got) != 0 {
			t.Errorf("alice's listen stream carried bob's update: %s", got[0].Params)
		}
		if got := notes.all(updated("mnemo://memory/alice/profile.json")); len(got) != 0 {
			t.Errorf("alice's listen stream carried a URI it did not listen to: %s", got[0].Params)
		}
	})

	t.Run("2026-07-28: forget everything asks the user, and a decline deletes nothing", func(t *testing.T) {
		user := &userAnswer{action: mcp.ElicitationResponseActionDecline}
		mc := modernClient(t, srv.url, alice, user)
		res := callHTTPTool(t, mc, "forget_memory", map[string]any{"all": true})
		if user.asked.Load() != 1 {
			t.Errorf("the user was asked %d times, want 1", user.asked.Load())
		}
		if !res.IsError || !strings.Contains(resultText(res), "not confirmed") {
			t.Errorf("forget_memory after a decline = %s, want an error result saying nothing was deleted", resultText(res))
		}
		listed := callHTTPTool(t, ac, "list_memories", map[string]any{"kind": "facts"})
		if !strings.Contains(resultText(listed), "Prefers coffee") {
			t.Errorf("alice's facts after a declined forget = %s, want them kept", resultText(listed))
		}
	})

	t.Run("2025-06-18 over stateless HTTP keeps the confirm phrase", func(t *testing.T) {
		user := &userAnswer{action: mcp.ElicitationResponseActionDecline}
		tr, err := transport.NewStreamableHTTP(srv.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + bob}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithElicitationHandler(user))
		defer c.Close()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ProtocolVersion: mcp.ProtocolVersion20250618, ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"}}}); err != nil {
			t.Fatal(err)
		}
		res := callHTTPTool(t, c, "forget_memory", map[string]any{"all": true, "confirm": "forget everything"})
		if user.asked.Load() != 0 || res.IsError || !strings.Contains(resultText(res), `"scope_forgotten":true`) {
			t.Errorf("forget_memory = %s (asked %d), want bob's memory forgotten on the confirm phrase without a question", resultText(res), user.asked.Load())
		}
	})
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
}
