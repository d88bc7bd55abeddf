package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameSaveMemory = "save_memory"

// saveArgs are the arguments of save_memory.
type saveArgs struct {
	Content    string  `json:"content" jsonschema:"The fact as one short, self-contained sentence about the user, e.g. 'Prefers Go over Python' or 'Has a daughter named Mia'."`
	Category   string  `json:"category,omitempty" jsonschema:"What kind of fact: preference, knowledge, context, behavior, goal or correction. Default: context."`
	Confidence float64 `json:"confidence,omitempty" jsonschema:"How sure the fact is, above 0 up to 1. Default 0.9 (the user said it plainly)."`
	Pinned     bool    `json:"pinned,omitempty" jsonschema:"true when the fact must be kept in mind in every conversation, whatever is asked (an allergy, a diet, a health or accessibility need, a hard rule the user set): it is then shown in every retrieve_memory as a standing fact. Diet, allergy, health and accessibility facts, corrections and behavior rules are standing without it."`
	UserID     string  `json:"user_id,omitempty" jsonschema:"Whose memory to save into. Leave empty for the configured user."`
	AgentName  string  `json:"agent_name,omitempty" jsonschema:"Save into this agent's own memory instead of the user's shared memory."`
}

// SaveMemory returns the save_memory tool: the host's model records a fact
// directly, without waiting for (or needing) the language model.
func SaveMemory(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameSaveMemory,
		mcp.WithDescription("Remember one fact about the user right away, exactly as you state it. "+
			"Call it when the user asks you to remember something (\"remember that I'm vegetarian\") or states a lasting preference, goal or correction you are sure of. "+
			"Works without a language model. A fact that memory already holds (same words, ignoring case and spacing) is not stored twice: the stored one is returned with duplicate true. "+
			"Returns the fact with its id (use it with update_memory, forget_memory and memory_history). "+
			"Do not save secrets (passwords, keys, tokens) or what is only true for this conversation."),
		inputSchema[saveArgs](func(root schemaNode) {
			set(root, schemaNode{"minLength": 1, "maxLength": 2000}, "content")
			set(root, schemaNode{"enum": memory.Categories}, "category")
			set(root, schemaNode{"exclusiveMinimum": 0, "maximum": 1}, "confidence")
			for _, id := range []string{"user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.SaveFactResult](nil),
		annotate("Save a fact", false, false, false),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args saveArgs) (*mcp.CallToolResult, error) {
		res, err := m.SaveFact(ctx, memory.SaveFactRequest{
			UserID:     args.UserID,
			AgentName:  args.AgentName,
			Content:    args.Content,
			Category:   args.Category,
			Confidence: args.Confidence,
			Pinned:     args.Pinned,
		})
		if err != nil {
			return toolError(ctx, nameSaveMemory, err)
		}
		f := res.Fact
		text := fmt.Sprintf("Saved %s (%s, confidence %.2g) for %s: %s", f.ID, f.Category, f.Confidence, scopeText(res.Scope), f.Content)
		if res.Duplicate {
			text = fmt.Sprintf("Already remembered as %s (%s, confidence %.2g) for %s: %s; nothing changed", f.ID, f.Category, f.Confidence, scopeText(res.Scope), f.Content)
		}
		if len(res.Redacted) > 0 {
			text += ". " + capitalize(redactedText(res.Redacted))
		}
		if len(res.Evicted) > 0 {
			text += fmt.Sprintf(". To stay within the fact limit, these lower-confidence facts were dropped: %s", orNone(res.Evicted))
		}
		return mcp.NewToolResultStructured(res, text+"."), nil
	})
}
