package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/prompts"
)

const nameMemoryGuide = "memory_guide"

// addPrompts registers the memory_guide prompt: the guide to when to call
// which tool, for hosts that load MCP prompts (into a system prompt, or on
// the user's request). It panics if the template fails to render, a bug
// that the tests catch.
func addPrompts(s *server.MCPServer, cfg config, names prompts.ToolNames) {
	text, err := prompts.MemoryGuide(prompts.InstructionsData{LLMConfigured: cfg.llm, DefaultUser: cfg.defaultUser, Tools: names})
	if err != nil {
		panic(fmt.Sprintf("tools: %v", err))
	}
	prompt := mcp.NewPrompt(nameMemoryGuide,
		mcp.WithPromptTitle("How to use mnemo memory"),
		mcp.WithPromptDescription("Instructions for the assistant on when to recall, store, save, correct, list and forget memory with mnemo's tools, "+
			"and how to treat what memory returns. Load it into the system prompt of a session that uses mnemo."))
	s.AddPrompt(prompt, func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("How to use mnemo, the long-term memory of this user",
			[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
	})
}
