package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameUpdateMemory = "update_memory"

// updateArgs are the arguments of update_memory; an argument left out
// leaves that part of the fact as it is.
type updateArgs struct {
	ID         string   `json:"id" jsonschema:"Id of the fact to change (fact_ followed by 8 hex digits), as save_memory, list_memories or retrieve_memory show it."`
	Content    *string  `json:"content,omitempty" jsonschema:"The corrected fact, as one short self-contained sentence. Leave out to keep the content."`
	Category   *string  `json:"category,omitempty" jsonschema:"New category: preference, knowledge, context, behavior, goal or correction. Leave out to keep it."`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"New confidence, above 0 up to 1. Leave out to keep it; to drop the fact use forget_memory."`
	Pinned     *bool    `json:"pinned,omitempty" jsonschema:"true pins the fact: it is shown in every retrieve_memory as a standing fact, whatever is asked (for what must hold in every conversation: an allergy, a diet, a hard rule). false unpins it. Leave out to keep it."`
	UserID     string   `json:"user_id,omitempty" jsonschema:"Whose memory holds the fact. Leave empty for the configured user."`
	AgentName  string   `json:"agent_name,omitempty" jsonschema:"The agent whose own memory holds the fact, if it is not in the user's shared memory."`
}

// UpdateMemory returns the update_memory tool: it corrects one fact in
// place, keeping its id and history.
func UpdateMemory(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameUpdateMemory,
		mcp.WithDescription("Correct one remembered fact in place: its content, category, confidence or pinned mark, by id. "+
			"Call it when the user corrects something memory holds (\"I moved to Lyon, not Paris\") and you know the fact's id; "+
			"find ids with list_memories or in retrieve_memory's facts. The fact keeps its id and the change is recorded in memory_history. "+
			"Returns the fact before and after and which fields changed; sending the values it already has changes nothing. "+
			"An unknown id is an error that says how to find the right one."),
		inputSchema[updateArgs](func(root schemaNode) {
			set(root, schemaNode{"minLength": 1, "maxLength": 64}, "id")
			set(root, schemaNode{"type": "string", "minLength": 1, "maxLength": 2000}, "content")
			set(root, schemaNode{"type": "string", "enum": memory.Categories}, "category")
			set(root, schemaNode{"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "confidence")
			set(root, schemaNode{"type": "boolean"}, "pinned")
			for _, id := range []string{"user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.UpdateFactResult](nil),
		annotate("Correct a fact", false, false, true),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args updateArgs) (*mcp.CallToolResult, error) {
		res, err := m.UpdateFact(ctx, memory.UpdateFactRequest{
			UserID:     args.UserID,
			AgentName:  args.AgentName,
			ID:         args.ID,
			Content:    args.Content,
			Category:   args.Category,
			Confidence: args.Confidence,
			Pinned:     args.Pinned,
		})
		if err != nil {
			return toolError(ctx, nameUpdateMemory, err)
		}
		f := res.Fact
		if len(res.Changed) == 0 {
			return mcp.NewToolResultStructured(res, fmt.Sprintf("Nothing changed: %s already is (%s, confidence %.2g): %s.", f.ID, f.Category, f.Confidence, f.Content)), nil
		}
		text := fmt.Sprintf("Updated %s (%s) for %s; it now reads (%s, confidence %.2g): %s.",
			f.ID, strings.Join(res.Changed, ", "), scopeText(res.Scope), f.Category, f.Confidence, f.Content)
		if len(res.Redacted) > 0 {
			text += " " + capitalize(redactedText(res.Redacted)) + "."
		}
		return mcp.NewToolResultStructured(res, text), nil
	})
}
