package tools

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameFlushMemory = "flush_memory"

// flushArgs are the arguments of flush_memory.
type flushArgs struct {
	UserID    string `json:"user_id,omitempty" jsonschema:"Whose pending exchanges to process. Leave empty for the configured user."`
	AgentName string `json:"agent_name,omitempty" jsonschema:"Process this agent's own memory instead of the user's shared memory."`
	ThreadID  string `json:"thread_id,omitempty" jsonschema:"Process only this conversation. Default: every conversation of the user."`
}

// FlushMemory returns the flush_memory tool: it runs the pending memory
// updates now instead of after the quiet period.
func FlushMemory(m Memory) server.ServerTool {
	tool := mcp.NewTool(nameFlushMemory,
		mcp.WithDescription("Distil the pending exchanges into the user's long-term profile and facts now, instead of after the quiet period. "+
			"Call it before ending a long session, or when the user asks you to remember something now. "+
			"Returns how many exchanges were processed, the ids of facts added and removed, the profile sections updated, "+
			"and what is still pending and why; with vector retrieval it also waits for the stored exchanges to be embedded "+
			"and reports how many are not yet (embedding_backlog). Without a configured language model nothing can be processed: it says so, "+
			"and the stored exchanges stay searchable with retrieve_memory. Calling it again when nothing is pending changes nothing."),
		inputSchema[flushArgs](func(root schemaNode) {
			for _, id := range []string{"thread_id", "user_id", "agent_name"} {
				set(root, idSchema(), id)
			}
		}),
		outputSchema[memory.FlushResult](nil),
		annotate("Process pending memory now", false, false, true),
	)
	return typed(tool, func(ctx context.Context, req mcp.CallToolRequest, args flushArgs) (*mcp.CallToolResult, error) {
		res, err := m.Flush(ctx, memory.FlushRequest{
			UserID:    args.UserID,
			AgentName: args.AgentName,
			ThreadID:  args.ThreadID,
			Progress:  progress(ctx, req),
		})
		if err != nil {
			return toolError(ctx, nameFlushMemory, err)
		}
		return mcp.NewToolResultStructured(res, flushSummary(res)), nil
	})
}

// progress returns a callback that reports flush progress to the client as
// notifications/progress (turns processed of those pending, and the
// stage), or nil when the client did not ask for progress. Progress must
// increase from one notification to the next, so a report that does not
// is left out.
func progress(ctx context.Context, req mcp.CallToolRequest) func(done, total int, message string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	var mu sync.Mutex
	last := -1
	return func(done, total int, message string) {
		mu.Lock()
		defer mu.Unlock()
		if done <= last {
			return
		}
		last = done
		err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token,
			"progress":      done,
			"total":         total,
			"message":       message,
		})
		if err != nil {
			slog.DebugContext(ctx, "send flush progress", "err", err)
		}
	}
}

// flushSummary is the text of a flush_memory result. It never claims more
// than was done: with nothing processed it says so and why.
func flushSummary(r *memory.FlushResult) string {
	var b strings.Builder
	where := scopeText(r.Scope)
	if r.ThreadID != "" {
		where += ", thread " + r.ThreadID
	}
	if r.TurnsProcessed == 0 {
		fmt.Fprintf(&b, "Nothing was processed for %s", where)
	} else {
		fmt.Fprintf(&b, "Processed %s for %s: %s added%s, %s removed%s, sections updated: %s",
			count(r.TurnsProcessed, "turn"), where,
			count(len(r.FactsAdded), "fact"), ids(r.FactsAdded),
			count(len(r.FactsRemoved), "fact"), ids(r.FactsRemoved),
			orNone(r.SectionsUpdated))
		if len(r.Ignored) > 0 {
			fmt.Fprintf(&b, "; ignored: %s", strings.Join(r.Ignored, "; "))
		}
	}
	pending := r.Pending.Turns
	if r.ThreadID != "" {
		pending = r.Pending.Threads[r.ThreadID]
	}
	switch {
	case pending > 0 && r.TurnsProcessed == 0 && r.Reason != "":
		b.WriteString(": " + r.Reason)
	case pending > 0 && r.Reason != "":
		fmt.Fprintf(&b, "; %s still pending: %s", count(pending, "turn"), r.Reason)
	case pending > 0:
		fmt.Fprintf(&b, "; %s still pending", count(pending, "turn"))
	case r.TurnsProcessed == 0:
		b.WriteString(": no turns were pending")
	}
	b.WriteString(".")
	return b.String()
}

// ids formats fact ids in parentheses, or nothing when there are none.
func ids(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return " (" + strings.Join(list, ", ") + ")"
}

// orNone joins names, or says none.
func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
