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
	Topic     string   `json:"topic,omitempty" jsonschema:"A word or name (Lisbon) to forget everything about. Alone, nothing is deleted: the reply previews every fact, profile section and exchange that mentions it, with ids. Show the user the preview; then call again with topic, the ids chosen (fact_ids, turn_ids, sections) and confirm 'forget everything about <topic>'. Only previewed items can be forgotten this way."`
	Sections  []string `json:"sections,omitempty" jsonschema:"Only with topic and confirm: profile sections of the preview to clear (work_context, personal_context, top_of_mind, recent_months, earlier_context, long_term_background)."`
	Confirm   string   `json:"confirm,omitempty" jsonschema:"With all: the exact phrase 'forget everything', after the user confirmed (when the client can ask the user itself, the server asks and this is not needed). With topic: 'forget everything about <topic>', after the user confirmed the preview."`
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
			"To forget a topic, give topic alone first: it previews what mentions it and deletes nothing; then forget the items the user chose with topic and confirm. "+
			"Returns what was deleted, which ids were not found, and what may still mention it (may_mention: facts, profile sections and exchanges holding its words and names, "+
			"each with its action: forget it too, or edit the section with update_profile)."),
		inputSchema[forgetArgs](func(root schemaNode) {
			set(root, schemaNode{"maxItems": 1000}, "fact_ids")
			set(root, schemaNode{"minLength": 1, "maxLength": 64}, "fact_ids", "[]")
			set(root, schemaNode{"maxItems": 1000}, "turn_ids")
			set(root, schemaNode{"minLength": 1, "maxLength": 128}, "turn_ids", "[]")
			set(root, schemaNode{"minLength": 1, "maxLength": 200}, "topic")
			set(root, schemaNode{"maxItems": len(memory.ProfileSections)}, "sections")
			set(root, schemaNode{"enum": memory.ProfileSections}, "sections", "[]")
			set(root, schemaNode{"minLength": 1, "maxLength": 230}, "confirm")
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
		if args.Topic != "" && args.Confirm == "" && len(args.FactIDs)+len(args.TurnIDs)+len(args.Sections) == 0 && !args.All && args.ThreadID == "" {
			pre, err := m.FindTopic(ctx, memory.TopicRequest{UserID: args.UserID, AgentName: args.AgentName, Topic: args.Topic})
			if err != nil {
				return toolError(ctx, nameForgetMemory, err)
			}
			res := &memory.ForgetResult{Scope: pre.Scope, FactsRemoved: []memory.Fact{}, TurnsRemoved: []memory.ForgottenTurn{},
				DerivedFactsRemoved: []memory.Fact{}, MentionWords: pre.Words, MayMention: []memory.Mention{}, Preview: pre}
			return mcp.NewToolResultStructured(res, previewSummary(pre)), nil
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
			Topic:      args.Topic,
			Sections:   args.Sections,
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
	if len(r.SectionsCleared) > 0 {
		text += "; cleared profile sections: " + strings.Join(r.SectionsCleared, ", ")
	}
	return text + ". " + mayMentionText(r)
}

// mayMentionText says what may still mention what a forget removed, or
// that the search for its words found nothing.
func mayMentionText(r *memory.ForgetResult) string {
	if len(r.MayMention) == 0 {
		if len(r.MentionWords) == 0 {
			return "What it held names no one and nothing to search the rest of memory for."
		}
		return "Nothing else in memory holds its words and names (" + strings.Join(r.MentionWords, ", ") + ")."
	}
	lines := []string{"May still mention it (searched for " + strings.Join(r.MentionWords, ", ") + "):"}
	lines = append(lines, mentionLines(r.MayMention)...)
	return strings.Join(lines, "\n")
}

// mentionLines renders mentions one a line, each with its action.
func mentionLines(ms []memory.Mention) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		switch m.Kind {
		case memory.MentionSection:
			out = append(out, fmt.Sprintf("- profile section %s: %q — edit or clear it with update_profile", m.Section, m.Text))
		case memory.MentionFact:
			out = append(out, fmt.Sprintf("- fact %s: %q — forget it with fact_ids", m.ID, m.Text))
		default:
			out = append(out, fmt.Sprintf("- exchange %s (thread %s): %q — forget it with turn_ids", m.ID, m.ThreadID, m.Text))
		}
	}
	return out
}

// previewSummary is the text of a topic preview.
func previewSummary(p *memory.TopicResult) string {
	if len(p.Mentions) == 0 {
		return fmt.Sprintf("Nothing in the memory of %s mentions %q (searched for %s); nothing was deleted.", scopeText(p.Scope), p.Topic, strings.Join(p.Words, ", "))
	}
	lines := []string{fmt.Sprintf("Preview, nothing deleted yet: %s in the memory of %s mention %q.", count(len(p.Mentions), "item"), scopeText(p.Scope), p.Topic)}
	lines = append(lines, mentionLines(p.Mentions)...)
	if p.More > 0 {
		lines = append(lines, fmt.Sprintf("…and %d more: forget these first, then preview again.", p.More))
	}
	lines = append(lines, fmt.Sprintf("To forget them, show the user this list; then call forget_memory with topic %q, confirm %q and the ids chosen (fact_ids, turn_ids, sections).", p.Topic, p.Confirm))
	return strings.Join(lines, "\n")
}

// factIDs lists the ids of facts, comma separated.
func factIDs(facts []memory.Fact) string {
	ids := make([]string, len(facts))
	for i, f := range facts {
		ids[i] = f.ID
	}
	return strings.Join(ids, ", ")
}
