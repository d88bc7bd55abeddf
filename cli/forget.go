package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/mnemo-mcp/mnemo/memory"
)

// forgetParts deletes single facts, exchanges or a whole thread of one
// scope through the same Service.Forget the forget_memory tool uses; without
// --yes it only says what it would delete.
func forgetParts(ctx context.Context, cfg *Config, store memory.Store, scope memory.Scope, a adminArgs, stdout, stderr io.Writer, log *slog.Logger) int {
	if !a.yes {
		fmt.Fprintf(stdout, "would delete from %s: facts %v, exchanges %v", scope.Key(), a.facts, a.turns)
		if a.thread != "" {
			fmt.Fprintf(stdout, ", every exchange of thread %s", a.thread)
		}
		fmt.Fprintln(stdout)
		fmt.Fprintln(stderr, "mnemo forget: this cannot be undone; run again with --yes to delete it")
		return exitUsage
	}
	svc, err := storeService(cfg, store, log)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		return exitError
	}
	defer svc.Close(ctx)
	res, err := svc.Forget(ctx, memory.ForgetRequest{
		UserID: scope.UserID, AgentName: scope.AgentName,
		FactIDs: a.facts, TurnIDs: a.turns, ThreadID: a.thread, Source: memory.SourceCLI,
	})
	if err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		if errors.Is(err, memory.ErrInvalidInput) || errors.Is(err, memory.ErrNotFound) {
			return exitUsage
		}
		return exitError
	}
	for _, f := range res.FactsRemoved {
		fmt.Fprintf(stdout, "deleted fact %s: %s\n", f.ID, f.Content)
	}
	for _, t := range res.TurnsRemoved {
		fmt.Fprintf(stdout, "deleted exchange %s (thread %s, %s)\n", t.ID, t.ThreadID, t.Time.Format("2006-01-02 15:04"))
	}
	for _, id := range res.NotFound {
		fmt.Fprintf(stdout, "not found: %s\n", id)
	}
	fmt.Fprintf(stdout, "deleted %d fact(s) and %d exchange(s) of %s\n", len(res.FactsRemoved), len(res.TurnsRemoved), scope.Key())
	return exitOK
}

// forget deletes a user's memory (every agent's too) or one agent's, after
// showing what it will delete; without --yes it only shows.
func forget(ctx context.Context, cfg *Config, store memory.Store, scope memory.Scope, yes bool, stdout, stderr io.Writer, log *slog.Logger) int {
	scopes, err := store.Scopes(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		return exitError
	}
	var doomed []memory.Scope
	for _, sc := range scopes {
		if sc == scope || scope.AgentName == "" && sc.UserID == scope.UserID {
			doomed = append(doomed, sc)
		}
	}
	if len(doomed) == 0 {
		fmt.Fprintf(stdout, "nothing is stored for %s\n", scope.Key())
		return exitOK
	}
	for _, sc := range doomed {
		fmt.Fprintf(stdout, "memory of %s: turn log, memory.json and its versions\n", sc.Key())
	}
	if !yes {
		fmt.Fprintln(stderr, "mnemo forget: this cannot be undone; run again with --yes to delete the memory listed above")
		return exitUsage
	}
	svc, err := storeService(cfg, store, log)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		return exitError
	}
	defer svc.Close(ctx)
	if err := svc.ForgetScope(ctx, scope.UserID, scope.AgentName); err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "deleted %d memory scope(s) of %s\n", len(doomed), scope.Key())
	return exitOK
}
