package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// downLLM is an extraction model that never answers: turns wait for it.
type downLLM struct{}

func (downLLM) Complete(context.Context, memory.CompletionRequest) (memory.Completion, error) {
	return memory.Completion{}, errors.New("model unavailable")
}

// TestOneVoicePerMode drives the server as a host would in each mode and
// checks that everything it says agrees with the mode: without an
// extraction model the host's model is the extraction model (no turn is
// pending, nothing asks for an API key, flush has nothing to distil);
// with one, turns wait for it and results say so.
func TestOneVoicePerMode(t *testing.T) {
	for _, mode := range []struct {
		name string
		llm  bool
		// want are phrases of each surface, in order: instructions,
		// memory_guide, add_memory's text, flush_memory's text.
		want [4]string
		// pending is what add_memory and flush_memory report pending.
		pending int
	}{
		{"keyless", false, [4]string{"you are the extraction model", "you are the extraction model",
			"stored and searchable, and nothing waits for extraction: the facts come from you", "none is needed"}, 0},
		{"model", true, [4]string{"a language model distils", "a language model distils",
			"1 turn pending — LLM configured", "1 turn(s) still pending"}, 1},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var e *testEnv
			if mode.llm {
				e = newEnvWith(t, []engine.Option{engine.WithLLM(downLLM{})}, WithLLMConfigured(true))
			} else {
				e = newEnv(t)
			}
			guide, err := e.client.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "memory_guide"}})
			if err != nil || len(guide.Messages) == 0 {
				t.Fatalf("GetPrompt() = %+v, %v", guide, err)
			}
			guideText, _ := mcp.AsTextContent(guide.Messages[0].Content)

			var added memory.AddResult
			addText := e.mustOK(t, "add_memory", `{"user_input": "I moved to Porto last month.", "agent_response": "Noted, Porto.", "thread_id": "t1",
				"facts": [{"content": "Lives in Porto", "category": "context"}]}`, &added)
			var flushed memory.FlushResult
			flushText := e.mustOK(t, "flush_memory", `{}`, &flushed)

			surfaces := [4]string{e.init.Instructions, guideText.Text, addText, flushText}
			for i, want := range mode.want {
				if !strings.Contains(surfaces[i], want) {
					t.Errorf("surface %d = %q, want it to say %q", i, surfaces[i], want)
				}
			}
			if added.Pending.Turns != mode.pending || flushed.Pending.Turns != mode.pending {
				t.Errorf("pending: add %+v, flush %+v; want %d", added.Pending, flushed.Pending, mode.pending)
			}
			if len(added.Facts) != 1 || added.Facts[0].Status != memory.HostFactKept {
				t.Errorf("facts = %+v, want the host's fact kept in either mode", added.Facts)
			}
			if mode.llm {
				return
			}
			if added.Pending.LLM != memory.KeylessMode || added.Ask != "" {
				t.Errorf("add_memory = %+v, want the keyless mode and nothing asked", added)
			}
			list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				surfaces := []string{tool.Description}
				if tool.Name == nameAddMemory || tool.Name == nameFlushMemory {
					surfaces = append(surfaces, addText, flushText)
				}
				for _, s := range append(surfaces, e.init.Instructions, guideText.Text) {
					for _, bad := range []string{"extraction waits", "waits for an LLM", "nothing can be processed", "OPENAI_API_KEY",
						"MNEMO_LLM", "facts exist only", "no profile or facts", "turns pending", "still pending"} {
						if strings.Contains(s, bad) {
							t.Errorf("%s: %q says %q in the keyless mode", tool.Name, s, bad)
						}
					}
				}
			}
		})
	}
}
