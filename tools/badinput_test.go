package tools

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestBadInput sends arguments a model might get wrong, through the
// protocol. Each must come back as an isError result whose text names the
// argument to fix — whether the schema validation, the argument decoding
// or the service caught it — and must leave the data directory exactly as
// it was.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	var seeded memory.AddResult
	e.mustOK(t, "add_memory", pairArgs, &seeded)

	// Invalid UTF-8 cannot survive JSON decoding (it becomes U+FFFD, which
	// is valid text), so it is tested where U+FFFD is refused: in an id.
	long := strings.Repeat("a", memory.MaxIDLength+1)
	huge := strings.Repeat("word ", memory.DefaultConfig().MaxMessageBytes/5+1)
	tests := []struct {
		name string
		tool string
		args string
		arg  string // named in the error text
	}{
		{"path traversal user_id", "add_memory", `{"user_input": "hi", "agent_response": "hello", "user_id": "../x"}`, "user_id"},
		{"dot user_id", "get_user_profile", `{"user_id": ".."}`, "user_id"},
		{"thread_id with slash", "add_memory", `{"user_input": "hi", "agent_response": "hello", "thread_id": "a/b"}`, "thread_id"},
		{"thread_id with space", "flush_memory", `{"thread_id": "a b"}`, "thread_id"},
		{"thread_id invalid UTF-8", "retrieve_memory", "{\"query\": \"x\", \"thread_id\": \"a\xffb\"}", "thread_id"},
		{"agent_name too long", "retrieve_memory", `{"query": "x", "agent_name": "` + long + `"}`, "agent_name"},
		{"empty query", "retrieve_memory", `{"query": ""}`, "query"},
		{"blank query", "retrieve_memory", `{"query": "  \n "}`, "query"},
		{"missing query", "retrieve_memory", `{"max_results": 3}`, "query"},
		{"max_results 0", "retrieve_memory", `{"query": "x", "max_results": 0}`, "max_results"},
		{"max_results -1", "retrieve_memory", `{"query": "x", "max_results": -1}`, "max_results"},
		{"max_results 1000", "retrieve_memory", `{"query": "x", "max_results": 1000}`, "max_results"},
		{"max_results fraction", "retrieve_memory", `{"query": "x", "max_results": 2.5}`, "max_results"},
		{"max_results string", "retrieve_memory", `{"query": "x", "max_results": "5"}`, "max_results"},
		{"max_tokens 5", "retrieve_memory", `{"query": "x", "max_tokens": 5}`, "max_tokens"},
		{"max_tokens huge", "retrieve_memory", `{"query": "x", "max_tokens": 1e30}`, "max_tokens"},
		{"timestamp yesterday", "add_memory", `{"user_input": "hi", "agent_response": "hello", "timestamp": "yesterday"}`, "timestamp"},
		{"timestamp year 3000", "add_memory", `{"user_input": "hi", "agent_response": "hello", "timestamp": "3000-01-01T00:00:00Z"}`, "timestamp"},
		{"meta_data array", "add_memory", `{"user_input": "hi", "agent_response": "hello", "meta_data": [1, 2]}`, "meta_data"},
		{"meta_data number", "add_memory", `{"user_input": "hi", "agent_response": "hello", "meta_data": 7}`, "meta_data"},
		{"meta_data string not an object", "add_memory", `{"user_input": "hi", "agent_response": "hello", "meta_data": "hello"}`, "meta_data"},
		{"meta_data stringified array", "add_memory", `{"user_input": "hi", "agent_response": "hello", "meta_data": "[1, 2]"}`, "meta_data"},
		{"meta_data invalid JSON string", "add_memory", `{"user_input": "hi", "agent_response": "hello", "meta_data": "{\"a\": 1,"}`, "meta_data"},
		{"both input forms", "add_memory", `{"user_input": "hi", "agent_response": "hello", "messages": [{"role": "user", "content": "hi"}]}`, "messages"},
		{"neither input form", "add_memory", `{"thread_id": "t1"}`, "user_input"},
		{"unknown role", "add_memory", `{"messages": [{"role": "bot", "content": "hi"}]}`, "role"},
		{"message without role", "add_memory", `{"messages": [{"content": "hi"}]}`, "role"},
		{"messages not a list", "add_memory", `{"messages": "hello"}`, "messages"},
		{"content not text", "add_memory", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}`, "content"},
		{"control character", "add_memory", `{"user_input": "hi\u0000there", "agent_response": "hello"}`, "user_input"},
		{"control character in a message", "add_memory", `{"messages": [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "bell\u0007"}]}`, "messages[1].content"},
		{"oversized content", "add_memory", `{"user_input": "` + huge + `", "agent_response": "ok"}`, "user_input"},
		{"unknown argument", "add_memory", `{"userInput": "hi", "agent_response": "hello"}`, "userInput"},
		{"boolean as string", "get_user_profile", `{"include_knowledge": "yes"}`, "include_knowledge"},
		{"arguments not an object", "flush_memory", `[1, 2]`, "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, e.dir)
			res := e.call(t, tt.tool, tt.args)
			text := resultText(t, res)
			if !res.IsError {
				t.Fatalf("%s(%.80s) succeeded: %.200s; want an error", tt.tool, tt.args, text)
			}
			if !strings.Contains(text, tt.arg) {
				t.Errorf("error = %q, want it to name %s", text, tt.arg)
			}
			if strings.Contains(text, "internal error") || strings.Contains(text, "Go struct") {
				t.Errorf("error = %q, want a message about the argument", text)
			}
			if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
				t.Errorf("data directory changed: %s", d)
			}
		})
	}
}
