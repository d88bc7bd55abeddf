package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// callAs calls tool with args as caller c, through the protocol.
func (e *testEnv) callAs(tb testing.TB, c Caller, tool, args string) *mcp.CallToolResult {
	tb.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.RawArguments = json.RawMessage(args)
	res, err := e.client.CallTool(WithCaller(tb.Context(), c), req)
	if err != nil {
		tb.Fatalf("CallTool(%s, %s) as %+v error = %v", tool, args, c, err)
	}
	return res
}

// TestCallerRefusedLeavesDataUnchanged calls every tool as alice naming
// someone else's memory: each answers isError naming the refusal, and the
// data directory is byte-for-byte unchanged.
func TestCallerRefusedLeavesDataUnchanged(t *testing.T) {
	e := newEnv(t)
	e.mustOK(t, "add_memory", `{"user_input": "I am Bob and I like tea.", "agent_response": "Noted.", "user_id": "bob"}`, &memory.AddResult{})
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Likes tea", "user_id": "bob"}`, &saved)
	e.mustOK(t, "save_memory", `{"content": "Likes coffee", "user_id": "alice", "agent_name": "coder"}`, &memory.SaveFactResult{})

	alice := Caller{User: "alice"}
	aliceCoder := Caller{User: "alice", Agent: "coder"}
	tests := []struct {
		name   string
		caller Caller
		tool   string
		args   string
		want   string
	}{
		{"add other user", alice, "add_memory", `{"user_input": "hi", "agent_response": "hello", "user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"retrieve other user", alice, "retrieve_memory", `{"query": "tea", "user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"profile other user", alice, "get_user_profile", `{"user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"flush other user", alice, "flush_memory", `{"user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"save other user", alice, "save_memory", `{"content": "x", "user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"update other user", alice, "update_memory", `{"id": "` + saved.Fact.ID + `", "content": "Hates tea", "user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"forget other user", alice, "forget_memory", `{"all": true, "confirm": "forget everything", "user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"list other user", alice, "list_memories", `{"user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"history other user", alice, "memory_history", `{"user_id": "bob"}`, `cannot use the memory of "bob"`},
		{"agent other agent", aliceCoder, "save_memory", `{"content": "x", "agent_name": "writer"}`, `cannot use the memory of agent "writer"`},
		{"agent token forgets shared", aliceCoder, "forget_memory", `{"all": true, "confirm": "forget everything", "agent_name": "writer"}`, `authenticated for agent "coder"`},
		{"empty caller", Caller{}, "retrieve_memory", `{"query": "tea"}`, "not authenticated as any user"},
		{"case differs", alice, "get_user_profile", `{"user_id": "Alice"}`, `cannot use the memory of "Alice"`},
	}
	before := snapshot(t, e.dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.callAs(t, tt.caller, tt.tool, tt.args)
			text := resultText(t, res)
			if !res.IsError || !strings.Contains(text, tt.want) || !strings.HasPrefix(text, "not allowed: ") {
				t.Errorf("%s(%s) = %q (isError %v), want a refusal containing %q", tt.tool, tt.args, text, res.IsError, tt.want)
			}
		})
	}
	if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
		t.Errorf("refused calls changed the data directory: %s", d)
	}
}

// TestCallerScope checks that a caller's calls land in the caller's scope:
// no user_id means the caller's user, an agent-bound caller's calls go to
// its agent, and what one user stores the other cannot retrieve.
func TestCallerScope(t *testing.T) {
	e := newEnv(t)
	alice := Caller{User: "alice"}
	bob := Caller{User: "bob"}
	bobCoder := Caller{User: "bob", Agent: "coder"}

	var add memory.AddResult
	decode(t, e.callAs(t, alice, "add_memory", `{"user_input": "My cat is called Zebedee.", "agent_response": "Lovely name."}`), &add)
	if add.Scope != (memory.Scope{UserID: "alice"}) {
		t.Errorf("alice's add scope = %+v, want user alice", add.Scope)
	}
	decode(t, e.callAs(t, alice, "add_memory", `{"user_input": "Zebedee likes fish.", "agent_response": "Noted.", "user_id": "alice"}`), &add)
	if add.Scope != (memory.Scope{UserID: "alice"}) {
		t.Errorf("alice naming herself: scope = %+v, want user alice", add.Scope)
	}
	var saved memory.SaveFactResult
	decode(t, e.callAs(t, bobCoder, "save_memory", `{"content": "Writes Go"}`), &saved)
	if saved.Scope != (memory.Scope{UserID: "bob", AgentName: "coder"}) {
		t.Errorf("bob/coder save scope = %+v, want user bob, agent coder", saved.Scope)
	}
	decode(t, e.callAs(t, bob, "save_memory", `{"content": "Reads novels", "agent_name": "reader"}`), &saved)
	if saved.Scope != (memory.Scope{UserID: "bob", AgentName: "reader"}) {
		t.Errorf("bob naming an agent: scope = %+v, want user bob, agent reader", saved.Scope)
	}

	var got memory.RetrieveResult
	decode(t, e.callAs(t, bob, "retrieve_memory", `{"query": "Zebedee cat fish"}`), &got)
	if len(got.Pages) != 0 || got.Scope.UserID != "bob" {
		t.Errorf("bob's retrieve = %d pages in %+v, want none of alice's turns", len(got.Pages), got.Scope)
	}
	decode(t, e.callAs(t, alice, "retrieve_memory", `{"query": "Zebedee cat fish"}`), &got)
	if len(got.Pages) == 0 {
		t.Errorf("alice's retrieve found nothing; want her own turns")
	}
}

// TestCallerResources checks resource reads: the fixed URI is the caller's
// memory, and a template naming another user is refused.
func TestCallerResources(t *testing.T) {
	e := newEnv(t)
	e.mustOK(t, "save_memory", `{"content": "Likes tea", "user_id": "bob"}`, &memory.SaveFactResult{})
	e.mustOK(t, "save_memory", `{"content": "Likes coffee", "user_id": "alice"}`, &memory.SaveFactResult{})
	e.mustOK(t, "save_memory", `{"content": "Likes the default", "user_id": "default"}`, &memory.SaveFactResult{})

	read := func(c Caller, uri string) (string, error) {
		res, err := e.client.ReadResource(WithCaller(t.Context(), c), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			return "", err
		}
		tc, _ := res.Contents[0].(mcp.TextResourceContents)
		return tc.Text, nil
	}
	alice := Caller{User: "alice"}
	tests := []struct {
		uri     string
		want    string // in the text; "" for a refusal
		wantErr string
	}{
		{"mnemo://memory/facts.json", "Likes coffee", ""},
		{"mnemo://memory/alice/facts.json", "Likes coffee", ""},
		{"mnemo://memory/bob/facts.json", "", `cannot use the memory of "bob"`},
		{"mnemo://memory/bob/coder/profile.md", "", `cannot use the memory of "bob"`},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			text, err := read(alice, tt.uri)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("read %s = %.80q, %v; want error containing %q", tt.uri, text, err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(text, tt.want) || strings.Contains(text, "Likes tea") || strings.Contains(text, "default") {
				t.Errorf("read %s = %.200q, %v; want alice's memory only", tt.uri, text, err)
			}
		})
	}
}

// TestWithoutCallerUnchanged checks that a context without a caller keeps
// the stdio behaviour: user_id chooses the memory.
func TestWithoutCallerUnchanged(t *testing.T) {
	e := newEnv(t)
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Likes tea", "user_id": "bob"}`, &saved)
	if saved.Scope.UserID != "bob" {
		t.Errorf("scope = %+v, want bob", saved.Scope)
	}
	if _, ok := CallerFrom(context.Background()); ok {
		t.Errorf("CallerFrom(Background) reported a caller")
	}
}

// decode fails the test unless res is a success, and decodes its
// structured content into out.
func decode(tb testing.TB, res *mcp.CallToolResult, out any) {
	tb.Helper()
	if res.IsError {
		tb.Fatalf("call is an error: %s", resultText(tb, res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		tb.Fatalf("marshal structured content: %v", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		tb.Fatalf("decode structured content: %v\n%s", err, raw)
	}
}
