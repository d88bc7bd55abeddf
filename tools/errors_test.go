package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// fakeMemory is a Memory whose methods are functions set by each test; an
// unset method panics.
type fakeMemory struct {
	add      func(context.Context, memory.AddRequest) (*memory.AddResult, error)
	retrieve func(context.Context, memory.RetrieveRequest) (*memory.RetrieveResult, error)
	profile  func(context.Context, memory.ProfileRequest) (*memory.ProfileResult, error)
	flush    func(context.Context, memory.FlushRequest) (*memory.FlushResult, error)
}

func (f *fakeMemory) Add(ctx context.Context, r memory.AddRequest) (*memory.AddResult, error) {
	return f.add(ctx, r)
}

func (f *fakeMemory) Retrieve(ctx context.Context, r memory.RetrieveRequest) (*memory.RetrieveResult, error) {
	return f.retrieve(ctx, r)
}

func (f *fakeMemory) Profile(ctx context.Context, r memory.ProfileRequest) (*memory.ProfileResult, error) {
	return f.profile(ctx, r)
}

func (f *fakeMemory) Flush(ctx context.Context, r memory.FlushRequest) (*memory.FlushResult, error) {
	return f.flush(ctx, r)
}

func TestToolError(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	secret := errors.New("open /var/lib/mnemo/users/alice/turns.jsonl: permission denied (key sk-secret-123)")
	tests := []struct {
		name    string
		ctx     context.Context
		err     error
		want    string // prefix of the message
		wantLog string // "" when nothing is logged at Error
	}{
		{"input error", t.Context(), fmt.Errorf("add: %w", &memory.InputError{Field: "thread_id", Message: "must not be empty"}), "invalid argument thread_id: must not be empty", ""},
		{"bare invalid input", t.Context(), fmt.Errorf("limit exceeded: %w", memory.ErrInvalidInput), "invalid argument: limit exceeded: invalid input", ""},
		{"not found", t.Context(), fmt.Errorf("fact fact_1234abcd: %w", memory.ErrNotFound), "fact fact_1234abcd: not found", ""},
		{"not found wrapped by the store", t.Context(), fmt.Errorf("update fact in ana: update memory /var/lib/mnemo/users/ana/memory.json: %w",
			&memory.NotFoundError{Message: `no fact "fact_x" in the memory of ana`}), `not found: no fact "fact_x" in the memory of ana`, ""},
		{"bare not found with a path", t.Context(), fmt.Errorf("restore memory version 3 of /var/lib/mnemo/users/ana: %w", memory.ErrNotFound),
			"restore memory version 3 of …: not found", ""},
		{"bare invalid input with a path", t.Context(), fmt.Errorf(`append turns to "C:\mnemo\users\ana\turns.jsonl": %w`, memory.ErrInvalidInput),
			`invalid argument: append turns to "…": invalid input`, ""},
		{"no llm", t.Context(), fmt.Errorf("extract facts: %w", memory.ErrNoLLM), "no language model is configured", ""},
		{"llm unavailable", t.Context(), fmt.Errorf("call https://llm.example/v1 (key sk-secret-123): %w", memory.ErrLLMUnavailable), "the language model is unavailable right now", ""},
		{"cancelled", canceled, fmt.Errorf("read turns: %w", context.Canceled), "cancelled: add_memory did not finish", ""},
		{"internal", t.Context(), fmt.Errorf("store turns: %w", secret), "internal error: add_memory failed", "sk-secret-123"},
		{"disk full", t.Context(), fmt.Errorf("store turns: write /srv/x: %w", syscall.ENOSPC), "storage full: the memory server's disk is full", "disk full"},
		{"read-only", t.Context(), fmt.Errorf("store turns: open /srv/x: %w", syscall.EROFS), "storage read-only: the memory server cannot write", "not writable"},
		{"storage unavailable", t.Context(), fmt.Errorf("store turns: append to postgres://mnemo:xxxxx@db.example/mnemo: %w", memory.ErrUnavailable), "storage unavailable: the memory server cannot reach its database right now", ""},
		{"outcome unknown", t.Context(), fmt.Errorf("store turns: append to postgres://mnemo:xxxxx@db.example/mnemo: %w: %w", memory.ErrOutcomeUnknown, memory.ErrUnavailable),
			"storage unavailable: the connection to the memory server's database broke while add_memory was writing, so whether it was stored is unknown; retry the same call", ""},
		{"corrupt", t.Context(), fmt.Errorf("load memory: %w", memory.ErrCorrupt), "internal error: add_memory failed", "corrupt data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := captureLogs(t)
			res, err := toolError(tt.ctx, "add_memory", tt.err)
			if err != nil {
				t.Fatalf("toolError() error = %v, want a tool result", err)
			}
			text := resultText(t, res)
			if !res.IsError || !strings.HasPrefix(text, tt.want) {
				t.Errorf("toolError() = %q (isError %v), want an error starting %q", text, res.IsError, tt.want)
			}
			if strings.Contains(text, "sk-secret") || strings.Contains(text, "/var/lib") || strings.Contains(text, `C:\`) || strings.Contains(text, "llm.example") || strings.Contains(text, "db.example") {
				t.Errorf("toolError() = %q leaks internal details", text)
			}
			logged := logs.String()
			if tt.wantLog == "" && strings.Contains(logged, "level=ERROR") {
				t.Errorf("logged %q, want nothing at Error level", logged)
			}
			if tt.wantLog != "" && (!strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, tt.wantLog)) {
				t.Errorf("logged %q, want an Error record with %q", logged, tt.wantLog)
			}
		})
	}
}

// captureLogs sends the default logger to a buffer for the rest of the
// test. Tests that use it must not run in parallel.
func captureLogs(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}

// TestInternalErrorThroughProtocol checks that a storage failure reaches
// the client as an isError result without its details, and that a panic
// in the service becomes a JSON-RPC error rather than a crash.
func TestInternalErrorThroughProtocol(t *testing.T) {
	logs := captureLogs(t)
	fake := &fakeMemory{
		retrieve: func(context.Context, memory.RetrieveRequest) (*memory.RetrieveResult, error) {
			return nil, errors.New("read /data/users/default/turns.jsonl: input/output error")
		},
		profile: func(context.Context, memory.ProfileRequest) (*memory.ProfileResult, error) {
			panic("bug")
		},
	}
	e := connect(t, NewServer(fake, "test"), "")

	res := e.call(t, "retrieve_memory", `{"query": "hello"}`)
	text := resultText(t, res)
	if !res.IsError || !strings.HasPrefix(text, "internal error: retrieve_memory failed") || strings.Contains(text, "/data") {
		t.Errorf("result = %q (isError %v), want a generic internal error", text, res.IsError)
	}
	if !strings.Contains(logs.String(), "input/output error") {
		t.Errorf("log = %q, want the error logged", logs.String())
	}

	if res, err := e.callErr(t, "get_user_profile", `{}`); err == nil {
		t.Errorf("panicking handler: result %+v, want a JSON-RPC error", res)
	}
}

// TestArgumentsReachService checks that every argument is passed on, and
// that a client's progress token gets flush progress notifications.
func TestArgumentsReachService(t *testing.T) {
	var gotAdd memory.AddRequest
	var gotRetrieve memory.RetrieveRequest
	var gotProfile memory.ProfileRequest
	fake := &fakeMemory{
		add: func(_ context.Context, r memory.AddRequest) (*memory.AddResult, error) {
			gotAdd = r
			return &memory.AddResult{ThreadID: "t", TurnIDs: []string{}}, nil
		},
		retrieve: func(_ context.Context, r memory.RetrieveRequest) (*memory.RetrieveResult, error) {
			gotRetrieve = r
			return &memory.RetrieveResult{Pages: []memory.PageHit{}, Injection: "<memory>\n</memory>"}, nil
		},
		profile: func(_ context.Context, r memory.ProfileRequest) (*memory.ProfileResult, error) {
			gotProfile = r
			return &memory.ProfileResult{Facts: []memory.Fact{}, Injection: "<memory>\n</memory>"}, nil
		},
		flush: func(_ context.Context, r memory.FlushRequest) (*memory.FlushResult, error) {
			if r.Progress != nil {
				r.Progress(0, 1, "updating memory from thread t")
				r.Progress(1, 1, "done")
			}
			return &memory.FlushResult{FactsAdded: []string{}, FactsRemoved: []string{}, SectionsUpdated: []string{}}, nil
		},
	}
	e := connect(t, NewServer(fake, "test"), "")

	e.call(t, "add_memory", `{"messages": [{"role": "assistant", "content": "x", "name": "bot", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, {"role": "tool", "tool_call_id": "c1", "content": "1"}],
		"thread_id": "t", "timestamp": "2025-01-01 10:00:00", "meta_data": {"k": "v"}, "user_id": "u", "agent_name": "a"}`)
	m := gotAdd.Messages
	if len(m) != 2 || m[0].Role != memory.RoleAssistant || m[0].Name != "bot" || m[1].ToolCallID != "c1" ||
		len(m[0].ToolCalls) != 1 || m[0].ToolCalls[0].Function.Arguments != `{"a":1}` || m[0].ToolCalls[0].ID != "c1" {
		t.Errorf("messages = %+v, want them passed on with tool calls", m)
	}
	if gotAdd.ThreadID != "t" || gotAdd.Timestamp != "2025-01-01 10:00:00" || string(gotAdd.MetaData) != `{"k":"v"}` || gotAdd.UserID != "u" || gotAdd.AgentName != "a" {
		t.Errorf("add request = %+v, want every argument", gotAdd)
	}

	e.call(t, "retrieve_memory", `{"query": "q", "max_results": 3, "max_tokens": 500, "thread_id": "t", "user_id": "u", "agent_name": "a", "relationship_with_user": "friend", "style_hint": "brief", "keywords": ["k1", "k 2"]}`)
	want := memory.RetrieveRequest{UserID: "u", AgentName: "a", ThreadID: "t", Query: "q", Keywords: []string{"k1", "k 2"}, MaxResults: 3, MaxTokens: 500, RelationshipWithUser: "friend", StyleHint: "brief"}
	if !reflect.DeepEqual(gotRetrieve, want) {
		t.Errorf("retrieve request = %+v, want %+v", gotRetrieve, want)
	}

	e.call(t, "get_user_profile", `{"user_id": "u", "include_knowledge": true, "include_assistant_knowledge": true}`)
	if (gotProfile != memory.ProfileRequest{UserID: "u", IncludeKnowledge: true, IncludeAssistantKnowledge: true}) {
		t.Errorf("profile request = %+v", gotProfile)
	}

	progress := make(chan mcp.JSONRPCNotification, 4)
	e.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			progress <- n
		}
	})
	var req mcp.CallToolRequest
	req.Params.Name = "flush_memory"
	req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
	if _, err := e.client.CallTool(t.Context(), req); err != nil {
		t.Fatalf("CallTool(flush_memory) error = %v", err)
	}
	for i := range 2 {
		select {
		case n := <-progress:
			if tok := n.Params.AdditionalFields["progressToken"]; tok != "p1" {
				t.Errorf("progress %d token = %v, want p1", i, tok)
			}
		case <-t.Context().Done(): // no deadline of its own: go test -timeout
			t.Fatal("no progress notification")
		}
	}
}

// TestToolErrorsNameNoPath calls every tool so that it fails — unknown
// ids, bad arguments, nothing to act on — over a real data directory: no
// message shows the data directory or any other absolute path.
func TestToolErrorsNameNoPath(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	e.mustOK(t, "add_memory", `{"user_input": "I sail a Contessa 32.", "agent_response": "Noted.", "thread_id": "t1"}`, &added)
	calls := []struct{ tool, args string }{
		{"update_memory", `{"id": "fact_00000000", "content": "x"}`},
		{"update_memory", `{"id": "fact_00000000", "confidence": 0.9, "user_id": "ana"}`},
		{"memory_history", `{"fact_id": "fact_00000000"}`},
		{"forget_memory", `{"fact_ids": ["fact_00000000"]}`},
		{"forget_memory", `{"turn_ids": ["turn_missing"], "user_id": "ana"}`},
		{"save_memory", `{"content": "x", "category": "nonsense"}`},
		{"list_memories", `{"kind": "nonsense"}`},
		{"retrieve_memory", `{"query": ""}`},
		{"add_memory", `{"messages": [{"role": "critic", "content": "hi"}]}`},
		{"flush_memory", `{"thread_id": "../etc"}`},
		{"get_user_profile", `{"user_id": "../../etc"}`},
	}
	for _, c := range calls {
		res := e.call(t, c.tool, c.args)
		text := resultText(t, res)
		if !res.IsError {
			t.Errorf("%s(%s) = %q, want an error", c.tool, c.args, text)
			continue
		}
		if strings.Contains(text, e.dir) || absPath().MatchString(text) {
			t.Errorf("%s(%s) error = %q, shows a file path", c.tool, c.args, text)
		}
	}
}
