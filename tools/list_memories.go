package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameListMemories = "list_memories"

// listArgs are the arguments of list_memories.
type listArgs struct {
	Kind          string  `json:"kind,omitempty" jsonschema:"What to list: facts (default), turns (stored exchanges) or threads (conversations)."`
	Category      string  `json:"category,omitempty" jsonschema:"Facts only: keep this category (preference, knowledge, context, behavior, goal, correction)."`
	MinConfidence float64 `json:"min_confidence,omitempty" jsonschema:"Facts only: keep facts at least this confident, 0 to 1."`
	ThreadID      string  `json:"thread_id,omitempty" jsonschema:"Keep facts learned from this conversation, or its exchanges and thread."`
	Since         string  `json:"since,omitempty" jsonschema:"Keep items from this time on: RFC 3339 (2025-03-01T12:00:00Z) or a date (2025-03-01)."`
	Until         string  `json:"until,omitempty" jsonschema:"Keep items up to this time: RFC 3339 or a date."`
	Text          string  `json:"text,omitempty" jsonschema:"Keep items whose text contains this, ignoring case. For a search by meaning use retrieve_memory."`
	Offset        int     `json:"offset,omitempty" jsonschema:"Skip this many matching items: 0, or next_offset from the previous page."`
	Limit         int     `json:"limit,omitempty" jsonschema:"Items per page, 1 to 100. Default 20."`
	UserID        string  `json:"user_id,omitempty" jsonschema:"Whose memory to list. Leave empty for the configured user."`
	AgentName     string  `json:"agent_name,omitempty" jsonschema:"List this agent's own memory instead of the user's shared memory."`
}

// ListMemories returns the list_memories tool: a filtered page of facts,
// exchanges or conversations with their ids.
func ListMemories(m Manager) server.ServerTool {
	tool := mcp.NewTool(nameListMemories,
		mcp.WithDescription("Browse what memory stores, a page at a time, newest first: facts (with id, category, confidence and source), "+
			"stored exchanges (turns) or conversations (threads). Filter by category, minimum confidence, thread, time range or text. "+
			"Call it when the user asks what you remember, or to find the ids that update_memory and forget_memory need. "+
			"Returns total matches and next_offset for the next page (0 when there is none); keep limit small to save context. "+
			"For what is relevant to a message, use retrieve_memory instead."),
		inputSchema[listArgs](func(root schemaNode) {
			set(root, schemaNode{"enum": []string{memory.ListFacts, memory.ListTurns, memory.ListThreads}}, "kind")
			set(root, schemaNode{"enum": memory.Categories}, "category")
			set(root, schemaNode{"minimum": 0, "maximum": 1}, "min_confidence")
			set(root, schemaNode{"maxLength": 64}, "since")
			set(root, schemaNode{"maxLength": 64}, "until")
			set(root, schemaNode{"maxLength": 1000}, "text")
			intRange(root, 0, 1000000, "offset")
			intRange(root, 1, memory.MaxListLimit, "limit")
			for _, id := range []string{"thread_id", "user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.ListResult](nil),
		annotate("List memory", true, false, true),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args listArgs) (*mcp.CallToolResult, error) {
		res, err := m.List(ctx, memory.ListRequest{
			UserID:        args.UserID,
			AgentName:     args.AgentName,
			Kind:          args.Kind,
			Category:      args.Category,
			MinConfidence: args.MinConfidence,
			ThreadID:      args.ThreadID,
			Since:         args.Since,
			Until:         args.Until,
			Text:          args.Text,
			Offset:        args.Offset,
			Limit:         args.Limit,
		})
		if err != nil {
			return toolError(ctx, nameListMemories, err)
		}
		return mcp.NewToolResultStructured(res, listText(res)), nil
	})
}

// listText renders a page as one line per item.
func listText(r *memory.ListResult) string {
	var b strings.Builder
	shown := len(r.Facts) + len(r.Turns) + len(r.Threads)
	noun := map[string]string{memory.ListFacts: "fact", memory.ListTurns: "stored exchange", memory.ListThreads: "conversation"}[r.Kind]
	fmt.Fprintf(&b, "%s of %s match", count(r.Total, noun), scopeText(r.Scope))
	if shown > 0 {
		fmt.Fprintf(&b, "; %d to %d:", r.Offset+1, r.Offset+shown)
	} else {
		b.WriteString(".")
	}
	for _, f := range r.Facts {
		fmt.Fprintf(&b, "\n- %s [%s, %.2g, from %s, %s] %s", f.ID, f.Category, f.Confidence, f.Source, f.CreatedAt.Format("2006-01-02"), oneLine(f.Content))
	}
	for _, t := range r.Turns {
		fmt.Fprintf(&b, "\n- %s [thread %s, %s] user: %s | assistant: %s", t.ID, t.ThreadID, t.Time.Format("2006-01-02 15:04"), clip(t.User, 200), clip(t.Reply, 200))
	}
	for _, th := range r.Threads {
		fmt.Fprintf(&b, "\n- %s: %s, %s to %s", th.ID, count(th.Turns, "exchange"), th.First.Format("2006-01-02"), th.Last.Format("2006-01-02"))
		if th.Pending > 0 { // only with an extraction model: then turns wait for it
			fmt.Fprintf(&b, ", %d pending", th.Pending)
		}
	}
	if r.NextOffset > 0 {
		fmt.Fprintf(&b, "\nMore: call again with offset %d.", r.NextOffset)
	}
	return b.String()
}

// lineBreaks escapes what would start a new line, so that a fact's own
// text cannot pose as a heading or another item of a listing.
var lineBreaks = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "\u0085", `\u0085`, "\u2028", `\u2028`, "\u2029", `\u2029`)

// oneLine returns s with its line breaks escaped (\n, \r, \u2028).
func oneLine(s string) string { return lineBreaks.Replace(s) }

// clip shortens s to at most n runes for a one-line listing.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
