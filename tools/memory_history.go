package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameMemoryHistory = "memory_history"

// historyArgs are the arguments of memory_history.
type historyArgs struct {
	FactID    string `json:"fact_id,omitempty" jsonschema:"Id of the fact whose story to tell (fact_…). Leave empty for the latest changes to any fact."`
	Section   string `json:"section,omitempty" jsonschema:"A profile section (work_context, personal_context, top_of_mind, recent_months, earlier_context, long_term_background) whose story to tell instead: who wrote it, when, and what it said before and after."`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many events to return, 1 to 100. Default 20."`
	UserID    string `json:"user_id,omitempty" jsonschema:"Whose memory to look at. Leave empty for the configured user."`
	AgentName string `json:"agent_name,omitempty" jsonschema:"Look at this agent's own memory instead of the user's shared memory."`
}

// MemoryHistory returns the memory_history tool: how a fact came to be.
func MemoryHistory(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameMemoryHistory,
		mcp.WithDescription("Explain how remembered facts came to be: when each was created, updated or removed, from which conversation (thread id) "+
			"or by whom (manual, cli, rollback), why, and what it said then; actor says who made each change: the person in the memory viewer (viewer), "+
			"you through a tool call (assistant), the language model's updater (updater), an import (import) or the command line (cli). "+
			"Call it when the user asks why you believe something or where a fact came from, or to find a fact that was removed. "+
			"With fact_id, that fact's events oldest first and the fact as it is now; with section, that profile section's edits oldest first "+
			"(who wrote it, its text before and after); without either, the latest events of every fact and every section, newest first."),
		inputSchema[historyArgs](func(root schemaNode) {
			set(root, schemaNode{"maxLength": 64}, "fact_id")
			set(root, schemaNode{"enum": memory.ProfileSections}, "section")
			intRange(root, 1, memory.MaxListLimit, "limit")
			for _, id := range []string{"user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.HistoryResult](nil),
		annotate("Fact history", true, false, true),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args historyArgs) (*mcp.CallToolResult, error) {
		res, err := m.FactHistory(ctx, memory.HistoryRequest{UserID: args.UserID, AgentName: args.AgentName, FactID: args.FactID, Section: args.Section, Limit: args.Limit})
		if err != nil {
			return toolError(ctx, nameMemoryHistory, err)
		}
		return mcp.NewToolResultStructured(res, historyText(res)), nil
	})
}

// historyText renders the events one per line.
func historyText(r *memory.HistoryResult) string {
	var b strings.Builder
	if r.Section != "" {
		fmt.Fprintf(&b, "History of profile section %s in the memory of %s:", r.Section, scopeText(r.Scope))
		if len(r.SectionEvents) == 0 {
			b.WriteString(" no changes recorded")
		}
		sectionEventLines(&b, r.SectionEvents)
		return b.String()
	}
	if r.FactID == "" {
		fmt.Fprintf(&b, "Latest %s of %s's facts (of %d recorded):", count(len(r.Events), "change"), scopeText(r.Scope), r.Total)
	} else {
		fmt.Fprintf(&b, "History of %s in the memory of %s:", r.FactID, scopeText(r.Scope))
	}
	if len(r.Events) == 0 {
		b.WriteString(" no changes recorded")
	}
	for _, e := range r.Events {
		fmt.Fprintf(&b, "\n- %s %s %s (source %s): %s", e.At.Format("2006-01-02 15:04"), e.FactID, e.Event, e.Source, e.Reason)
		if e.Content != "" {
			fmt.Fprintf(&b, " — %q", clip(e.Content, 200))
		}
	}
	if r.FactID != "" {
		if r.Current != nil {
			fmt.Fprintf(&b, "\nNow (%s, confidence %.2g): %s", r.Current.Category, r.Current.Confidence, r.Current.Content)
		} else {
			b.WriteString("\nIt is no longer in memory.")
		}
	}
	if r.FactID == "" && len(r.SectionEvents) > 0 {
		fmt.Fprintf(&b, "\nLatest %s of the profile sections:", count(len(r.SectionEvents), "change"))
		sectionEventLines(&b, r.SectionEvents)
	}
	return b.String()
}

// sectionEventLines renders section events one per line: when, which
// section, by whom, and the text after the change.
func sectionEventLines(b *strings.Builder, events []memory.SectionEvent) {
	for _, e := range events {
		who := string(e.Actor)
		if who == "" {
			who = "unknown"
		}
		fmt.Fprintf(b, "\n- %s %s by %s (source %s): %s", e.At.Format("2006-01-02 15:04"), e.Section, who, e.Source, e.Reason)
		switch {
		case e.New != "":
			fmt.Fprintf(b, " — now %q", clip(e.New, 200))
		case e.Old != "":
			b.WriteString(" — cleared")
		}
		if e.Old != "" {
			fmt.Fprintf(b, " (was %q)", clip(e.Old, 200))
		}
	}
}
