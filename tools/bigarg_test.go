package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxErrorEcho is the most an error result may be: enough to name the
// argument and say what to do, never the argument itself when it is big.
const maxErrorEcho = 2 << 10

// TestErrorsDoNotEchoBigArguments (issue 41): every string argument of
// every tool, given 200 KB that the tool refuses (for ids: characters an
// id may not have; elsewhere text of the wrong form or too long), is
// refused with a message of at most 2 KB that names the argument —
// never the 200 KB quoted back.
func TestErrorsDoNotEchoBigArguments(t *testing.T) {
	e := newEnv(t)
	list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("/é", 100<<10/3) // 200 KB, not an id, not a time, not a category
	for _, tool := range list.Tools {
		for name, p := range tool.InputSchema.Properties {
			prop, _ := p.(map[string]any)
			if prop["type"] != "string" {
				continue
			}
			t.Run(tool.Name+"/"+name, func(t *testing.T) {
				args := map[string]any{name: big}
				// The other required arguments, plainly valid, so that the
				// big one is what is refused.
				for _, req := range tool.InputSchema.Required {
					if req != name {
						args[req] = "hello"
					}
				}
				raw, _ := json.Marshal(args)
				res, err := e.callErr(t, tool.Name, string(raw))
				if err != nil {
					if len(err.Error()) > maxErrorEcho {
						t.Errorf("protocol error of %d bytes, want at most %d: %.200s…", len(err.Error()), maxErrorEcho, err)
					}
					return
				}
				if !res.IsError {
					return // the tool accepted it (a long query is fine)
				}
				text := resultText(t, res)
				if len(text) > maxErrorEcho {
					t.Errorf("error of %d bytes, want at most %d: %.300s…", len(text), maxErrorEcho, text)
				}
			})
		}
	}
}
