package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameUpdateProfile = "update_profile"

// profileEditArgs are the arguments of update_profile.
type profileEditArgs struct {
	Section   string `json:"section" jsonschema:"The profile section to replace or clear: work_context, personal_context, top_of_mind, recent_months, earlier_context or long_term_background (get_user_profile shows them)."`
	Text      string `json:"text" jsonschema:"The section's new text, a short paragraph; an empty string clears the section."`
	UserID    string `json:"user_id,omitempty" jsonschema:"Whose profile to change. Leave empty for the configured user."`
	AgentName string `json:"agent_name,omitempty" jsonschema:"Change this agent's own memory of the user instead of the user's shared memory."`
}

// UpdateProfile returns the update_profile tool: it replaces or clears
// one section of the profile.
func UpdateProfile(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameUpdateProfile,
		mcp.WithDescription("Replace or clear one section of the user's profile (the summaries get_user_profile shows: work_context, personal_context, top_of_mind, "+
			"recent_months, earlier_context, long_term_background). Call it when the user says a summary is wrong or must not mention something, "+
			"for example a section forget_memory reported in sections_may_mention; give the corrected text, or an empty text to clear the section. "+
			"The previous text is kept as an earlier version of the memory (the command line can restore it); later conversations may update the section again. "+
			"Returns the section's text before and after."),
		inputSchema[profileEditArgs](func(root schemaNode) {
			set(root, schemaNode{"enum": memory.ProfileSections}, "section")
			set(root, schemaNode{"maxLength": memory.MaxSectionRunes}, "text")
			for _, id := range []string{"user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.UpdateProfileResult](nil),
		annotate("Change a profile section", false, true, true),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args profileEditArgs) (*mcp.CallToolResult, error) {
		res, err := m.UpdateProfile(ctx, memory.UpdateProfileRequest{
			UserID:    args.UserID,
			AgentName: args.AgentName,
			Section:   args.Section,
			Text:      args.Text,
		})
		if err != nil {
			return toolError(ctx, nameUpdateProfile, err)
		}
		var text string
		switch {
		case !res.Changed && res.Text == "":
			text = fmt.Sprintf("Nothing changed: %s of %s is already empty.", res.Section, scopeText(res.Scope))
		case !res.Changed:
			text = fmt.Sprintf("Nothing changed: %s of %s already reads: %s", res.Section, scopeText(res.Scope), res.Text)
		case res.Text == "":
			text = fmt.Sprintf("Cleared %s of %s.", res.Section, scopeText(res.Scope))
		default:
			text = fmt.Sprintf("Updated %s of %s; it now reads: %s", res.Section, scopeText(res.Scope), res.Text)
		}
		return mcp.NewToolResultStructured(res, text), nil
	})
}
