package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameForgetMemory = "forget_memory"

// forgetArgs are the arguments of forget_memory.
type forgetArgs struct {
	FactIDs   []string `json:"fact_ids,omitempty" jsonschema:"Ids of facts to delete (fact_…), as list_memories shows them."`
	TurnIDs   []string `json:"turn_ids,omitempty" jsonschema:"Ids of stored exchanges to delete (turn_…), as list_memories with kind turns shows them."`
	ThreadID  string   `json:"thread_id,omitempty" jsonschema:"Delete every stored exchange of this conversation."`
	All       bool     `json:"all,omitempty" jsonschema:"Delete everything remembered in this scope: profile, facts and every exchange (for the user's shared memory, every agent's memory of the user too). Needs confirm."`
	Confirm   string   `json:"confirm,omitempty" jsonschema:"Only with all: the exact phrase 'forget everything', after the user confirmed. When the client can ask the user itself, the server asks and this is not needed."`
	KeepFacts bool     `json:"keep_facts,omitempty" jsonschema:"With turn_ids or thread_id: keep the facts extracted from a conversation that is left with no stored exchange (by default they are deleted with it)."`
	UserID    string   `json:"user_id,omitempty" jsonschema:"Whose memory to delete from. Leave empty for the configured user."`
	AgentName string   `json:"agent_name,omitempty" jsonschema:"Delete from this agent's own memory instead of the user's shared memory."`
}

// ForgetMemory returns the forget_memory tool: it deletes facts, stored
// exchanges or a whole scope, for good.
// When the client can ask the user (confirm.go), forgetting everything
// waits for the user's answer instead of trusting confirm.
func ForgetMemory(m Manager, opts ...Option) server.ServerTool {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	q := newQuestions(cfg.confirmKey, time.Now)
	tool := mcp.NewTool(nameForgetMemory,
		mcp.WithDescription("Permanently delete what memory holds: facts by id, stored exchanges by id, every exchange of one conversation (thread_id), "+
			"or — with all and confirm 'forget everything' — the whole memory of the user. "+
			"Call it only when the user asks you to forget something; look the ids up with list_memories first, and ask before deleting everything. "+
			"Deleted data leaves disk, search indexes, caches and earlier versions and cannot be recovered. Only the named user's memory is touched. "+
			"Deleting exchanges also deletes the facts extracted from a conversation left with no exchange (keep_facts keeps them). "+
			"Returns what was deleted, which ids were not found, facts that were kept but may still mention it, "+
			"and profile sections that may still mention it (change those with update_profile)."),
		inputSchema[forgetArgs](func(root schemaNode) {
			set(root, schemaNode{"maxItems": 1000}, "fact_ids")
			set(root, schemaNode{"minLength": 1, "maxLength": 64}, "fact_ids", "[]")
			set(root, schemaNode{"maxItems": 1000}, "turn_ids")
			set(root, schemaNode{"minLength": 1, "maxLength": 128}, "turn_ids", "[]")
			set(root, schemaNode{"enum": []string{memory.ForgetEverything}}, "confirm")
			for _, id := range []string{"thread_id", "user_id", "agent_name"} {
				// Present, an id must name something: an empty agent_name
				// or thread_id (an unset variable in a script) never
				// widens a forget to the whole memory.
				set(root, nonEmptyIDSchema(), id)
			}
		}),
		outputSchema[memory.ForgetResult](nil),
		annotate("Forget memory", false, true, true),
	)
	return typed(tool, func(ctx context.Context, req mcp.CallToolRequest, args forgetArgs) (*mcp.CallToolResult, error) {
		if args.All && canAskUser(ctx, cfg.legacyHTTP) {
			if stop := q.confirmForgetAll(ctx, req, forgetAllText(args, cfg.defaultUser), forgetTarget(ctx, args)); stop != nil {
				return stop, nil
			}
			args.Confirm = memory.ForgetEverything
		}
		res, err := m.Forget(ctx, memory.ForgetRequest{
			UserID:     args.UserID,
			AgentName:  args.AgentName,
			FactIDs:    args.FactIDs,
			TurnIDs:    args.TurnIDs,
			ThreadID:   args.ThreadID,
			AllOfScope: args.All,
			Confirm:    args.Confirm,
			KeepFacts:  args.KeepFacts,
		})
		if err != nil {
			return toolError(ctx, nameForgetMemory, err)
		}
		return mcp.NewToolResultStructured(res, forgetSummary(res)), nil
	})
}

// forgetAllText names the memory a forget-everything call deletes, for
// the question put to the user.
func forgetAllText(args forgetArgs, defaultUser string) string {
	user := args.UserID
	if user == "" {
		user = defaultUser
	}
	text := "the configured user"
	if user != "" {
		text = "user " + user
	}
	if args.AgentName != "" {
		return text + " in agent " + args.AgentName + "'s memory"
	}
	return text + ", including every agent's memory of them"
}

// forgetSummary is the text of a forget_memory result.
func forgetSummary(r *memory.ForgetResult) string {
	if r.ScopeForgotten {
		if r.Scope.AgentName == "" {
			return "Forgot everything remembered about " + scopeText(r.Scope) + ", including every agent's memory of them."
		}
		return "Forgot everything in the memory of " + scopeText(r.Scope) + "."
	}
	var parts []string
	if n := len(r.FactsRemoved); n > 0 {
		parts = append(parts, count(n, "fact")+" ("+factIDs(r.FactsRemoved)+")")
	}
	if n := len(r.TurnsRemoved); n > 0 {
		parts = append(parts, count(n, "stored exchange"))
	}
	if n := len(r.DerivedFactsRemoved); n > 0 {
		parts = append(parts, count(n, "fact")+" extracted from them ("+factIDs(r.DerivedFactsRemoved)+")")
	}
	text := fmt.Sprintf("Forgot %s from %s", strings.Join(parts, " and "), scopeText(r.Scope))
	if len(r.NotFound) > 0 {
		text += "; not found: " + strings.Join(r.NotFound, ", ")
	}
	if len(r.DerivedFactsKept) > 0 {
		text += "; kept facts extracted from the same conversation, which may still mention it: " + factIDs(r.DerivedFactsKept)
	}
	if len(r.SectionsMayMention) > 0 {
		text += "; profile sections that may still mention it (change them with update_profile): " + strings.Join(r.SectionsMayMention, ", ")
	}
	return text + "."
}

// factIDs lists the ids of facts, comma separated.
func factIDs(facts []memory.Fact) string {
	ids := make([]string, len(facts))
	for i, f := range facts {
		ids[i] = f.ID
	}
	return strings.Join(ids, ", ")
}
