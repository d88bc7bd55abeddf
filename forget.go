package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

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
	tokens, err := tiktoken.NewLazy(cfg.Memory.TokenEncoding)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo forget: %v\n", err)
		return exitError
	}
	svc, err := memory.NewService(cfg.Memory, store, tokens, memory.WithLogger(log))
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
