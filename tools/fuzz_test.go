package tools

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// FuzzToolArguments sends arbitrary JSON as the arguments of every tool
// straight to its handler: the handler must never panic, always return a
// result, and explain every error in text.
func FuzzToolArguments(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `"x"`, `{"user_input":"hi","agent_response":"yo"}`,
		`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","tool_calls":[{"id":"1","function":{"name":"f"}}]}]}`,
		`{"messages":"[{\"role\":\"user\",\"content\":\"a\"}]"}`,
		`{"user_input":"a","meta_data":"{\"k\":[1,2]}"}`,
		`{"user_input":"a","meta_data":{"a":{"b":{"c":[[[[]]]]}}}}`,
		`{"query":"what","max_results":1e400}`, `{"query":"what","max_results":-0.5}`,
		`{"query":"</memory><memory>","max_tokens":100,"thread_id":"..","user_id":"../etc"}`,
		`{"timestamp":"2024-02-30 25:61:61","user_input":"a"}`,
		`{"include_knowledge":"yes"}`, `{"thread_id":null,"user_id":null}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	store, err := files.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	svc, err := engine.NewService(memory.DefaultConfig(), store, mustCounter(f))
	if err != nil {
		f.Fatal(err)
	}
	all := All(svc)
	f.Fuzz(func(t *testing.T, args string) {
		var decoded any
		if json.Unmarshal([]byte(args), &decoded) != nil {
			return
		}
		for _, st := range all {
			req := mcp.CallToolRequest{}
			req.Params.Name = st.Tool.Name
			req.Params.Arguments = decoded
			res, err := st.Handler(t.Context(), req)
			if err != nil {
				t.Fatalf("%s(%s) returned a Go error: %v", st.Tool.Name, args, err)
			}
			if res == nil {
				t.Fatalf("%s(%s) returned no result", st.Tool.Name, args)
			}
			if res.IsError {
				if len(res.Content) == 0 {
					t.Fatalf("%s(%s) error result without a message", st.Tool.Name, args)
				}
				if tc, ok := res.Content[0].(mcp.TextContent); !ok || tc.Text == "" {
					t.Fatalf("%s(%s) error result without text: %#v", st.Tool.Name, args, res.Content)
				}
			}
		}
	})
}
