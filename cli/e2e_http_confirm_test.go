package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// modernCall posts one tools/call of protocol 2026-07-28 (stateless,
// everything in the request) with token and returns its result.
func modernCall(t *testing.T, url, token, tool string, params map[string]any) map[string]any {
	t.Helper()
	params["name"] = tool
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "e2e-modern", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Result map[string]any `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.Result == nil {
		t.Fatalf("tools/call %s = %d %s", tool, resp.StatusCode, b)
	}
	return out.Result
}

// TestE2EHTTPForgetAnswerIsBound (issue 41, low 4): the user's "yes" to
// forgetting one agent's memory, asked of a 2026-07-28 client, cannot be
// replayed on a call that forgets the whole user, and an answer brought
// with no question asked (no request state) is not taken: both are asked
// anew and delete nothing. The answer to the question asked still
// forgets what it asked about. Before the fix both forgot the whole user.
func TestE2EHTTPForgetAnswerIsBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, nil)
	ac := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	for _, args := range []map[string]any{
		{"content": "Prefers green tea"},
		{"content": "Scratch note: try the new parser", "agent_name": "scratch"},
	} {
		if res := callHTTPTool(t, ac, "save_memory", args); res.IsError {
			t.Fatalf("save_memory = %s", resultText(res))
		}
	}
	yes := map[string]any{"confirm_forget": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	kept := func(what string) {
		t.Helper()
		listed := callHTTPTool(t, ac, "list_memories", map[string]any{"kind": "facts"})
		if !strings.Contains(resultText(listed), "Prefers green tea") {
			t.Errorf("%s: alice's shared memory is gone: %s", what, resultText(listed))
		}
	}
	asked := func(what string, res map[string]any) {
		t.Helper()
		if res["resultType"] != "input_required" {
			t.Errorf("%s = %v, want the question asked (input_required), nothing deleted", what, res)
		}
	}

	first := modernCall(t, srv.url, alice, "forget_memory", map[string]any{"arguments": map[string]any{"all": true, "agent_name": "scratch"}})
	asked("forget agent scratch's memory", first)
	state, _ := first["requestState"].(string)
	if state == "" {
		t.Fatalf("the question carries no requestState to bind the answer to: %v", first)
	}

	replayed := modernCall(t, srv.url, alice, "forget_memory", map[string]any{
		"arguments": map[string]any{"all": true}, "inputResponses": yes, "requestState": state})
	asked("the answer about scratch replayed on forget the whole user", replayed)
	kept("after the replay")

	unasked := modernCall(t, srv.url, alice, "forget_memory", map[string]any{
		"arguments": map[string]any{"all": true}, "inputResponses": yes})
	asked("an answer with no question asked", unasked)
	kept("after the unasked answer")

	answered := modernCall(t, srv.url, alice, "forget_memory", map[string]any{
		"arguments": map[string]any{"all": true, "agent_name": "scratch"}, "inputResponses": yes, "requestState": state})
	if sc, _ := answered["structuredContent"].(map[string]any); sc == nil || sc["scope_forgotten"] != true {
		t.Errorf("the answer to the question asked = %v, want agent scratch's memory forgotten", answered)
	}
	kept("after forgetting scratch")
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestE2EHTTPMetaDataTextRule (issue 41, low 5): add_memory refuses a
// meta_data whose strings hold a control character or terminal escape, as
// it refuses them in a message, and stores nothing. Before the fix the
// escape was stored.
func TestE2EHTTPMetaDataTextRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, nil)
	ac := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	res := callHTTPTool(t, ac, "add_memory", map[string]any{"user_input": "I keep the boat in Cascais.", "agent_response": "Noted.",
		"meta_data": map[string]any{"title": "Marlin\x1b]0;pwned\x07", "tags": []any{"ok", "\x1b[31mred"}}})
	if !res.IsError || !strings.Contains(resultText(res), "control character") {
		t.Errorf("add_memory with an escape in meta_data = %s (isError %v), want a refusal naming the control character", resultText(res), res.IsError)
	}
	listed := callHTTPTool(t, ac, "list_memories", map[string]any{"kind": "exchanges"})
	if strings.Contains(resultText(listed), "Cascais") {
		t.Errorf("the refused exchange was stored: %s", resultText(listed))
	}
}
