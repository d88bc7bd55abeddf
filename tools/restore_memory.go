package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameRestoreMemory = "restore_memory"

// restoreArgs are the arguments of restore_memory.
type restoreArgs struct {
	ID        string `json:"id" jsonschema:"Id of the fact to bring back, as memory_history names it in a retired, merged or replaced event."`
	UserID    string `json:"user_id,omitempty" jsonschema:"Whose memory held the fact. Leave empty for the configured user."`
	AgentName string `json:"agent_name,omitempty" jsonschema:"The agent whose own memory held the fact, if it was not in the user's shared memory."`
}

// RestoreMemory returns the restore_memory tool: it brings back a fact
// that was retired for not being confirmed, merged into another or
// replaced by a later conversation.
func RestoreMemory(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameRestoreMemory,
		mcp.WithDescription("Bring back a fact that memory no longer holds as current: one retired because nobody confirmed it for months, "+
			"merged into a near-duplicate, or replaced by a later conversation. "+
			"Call it when the user says such a fact is still true, or that a merge lost something; find its id with memory_history "+
			"(events \"retired\", \"merged\" or \"replaced\"). The fact comes back with its id, sources and creation time, confirmed now; "+
			"the restore is recorded in memory_history. An id that is not retired, merged or replaced, or a fact that a current fact already says, "+
			"is an error that says so. To correct a current fact use update_memory."),
		inputSchema[restoreArgs](func(root schemaNode) {
			set(root, schemaNode{"minLength": 1, "maxLength": 64}, "id")
			for _, id := range []string{"user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.RestoreFactResult](nil),
		annotate("Restore a fact", false, false, false),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args restoreArgs) (*mcp.CallToolResult, error) {
		res, err := m.RestoreFact(ctx, memory.RestoreFactRequest{UserID: args.UserID, AgentName: args.AgentName, ID: args.ID, Source: memory.SourceManual})
		if err != nil {
			return toolError(ctx, nameRestoreMemory, err)
		}
		f := res.Fact
		return mcp.NewToolResultStructured(res, fmt.Sprintf("Restored %s in the memory of %s (%s, confidence %.2g): %s.",
			f.ID, scopeText(res.Scope), f.Category, f.Confidence, f.Content)), nil
	})
}
