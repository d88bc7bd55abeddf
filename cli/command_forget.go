package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/mnemo-mcp/mnemo/memory"
)

// runForget is "mnemo forget": it deletes single facts, exchanges or a
// thread, or with --all the whole memory of a user or agent. Without --yes
// it only says what it would delete. An empty value is never "all": the
// parser refuses empty flag values, and the whole memory goes only with
// --all.
func runForget(ctx context.Context, c *call) int {
	if !c.args.has("user") {
		return c.fail(exitUsage, "name the user with --user U (and --agent A for one agent's memory)")
	}
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	parts := c.args.has("fact") || c.args.has("turn") || c.args.has("thread")
	switch {
	case c.args.flag("keep-facts") && !c.args.has("turn") && !c.args.has("thread"):
		return c.fail(exitUsage, "--keep-facts is about the facts extracted from forgotten exchanges; use it with --turn or --thread")
	case parts && c.args.flag("all"):
		return c.fail(exitUsage, "--all deletes the whole memory; leave it out to delete only the facts, exchanges or thread named")
	case !parts && !c.args.flag("all"):
		return c.fail(exitUsage, "say what to forget: --fact ID, --turn ID or --thread T, or --all for the whole memory of %s", scope.Key())
	}
	if dataDirMissing(c.cfg) {
		fmt.Fprintf(c.stdout, "nothing is stored for %s: %s\n", scope.Key(), noMemoryIn(c.cfg.DataDir))
		return exitOK
	}
	store, err := openStore(ctx, c.cfg, c.log)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer store.Close()
	if parts {
		return forgetParts(ctx, c, store, scope)
	}
	return forgetScope(ctx, c, store, scope)
}

// forgetParts deletes single facts, exchanges or a whole thread of one
// scope through the same Service.Forget the forget_memory tool uses; without
// --yes it only says what it would delete.
func forgetParts(ctx context.Context, c *call, store memory.Store, scope memory.Scope) int {
	stdout := c.stdout
	facts, turns, thread := c.args.all("fact"), c.args.all("turn"), c.args.str("thread")
	if !c.args.flag("yes") {
		fmt.Fprintf(stdout, "would delete from %s: facts %v, exchanges %v", scope.Key(), facts, turns)
		if thread != "" {
			fmt.Fprintf(stdout, ", every exchange of thread %s", thread)
		}
		fmt.Fprintln(stdout)
		return c.fail(exitUsage, "this cannot be undone; run again with --yes to delete it")
	}
	svc, err := openService(c.cfg, store, c.log, withoutModels, nil)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer svc.Close(ctx)
	res, err := svc.Forget(ctx, memory.ForgetRequest{
		UserID: scope.UserID, AgentName: scope.AgentName,
		FactIDs: facts, TurnIDs: turns, ThreadID: thread, Source: memory.SourceCLI,
		KeepFacts: c.args.flag("keep-facts"),
	})
	if err != nil {
		c.fail(exitError, "%s", cliMessage(err, scope))
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
	for _, f := range res.DerivedFactsRemoved {
		fmt.Fprintf(stdout, "deleted fact %s, extracted from thread %s: %s\n", f.ID, f.Source, f.Content)
	}
	for _, id := range res.NotFound {
		fmt.Fprintf(stdout, "not found: %s\n", id)
	}
	for _, f := range res.DerivedFactsKept {
		fmt.Fprintf(stdout, "kept fact %s, extracted from thread %s, which may still mention it: %s\n", f.ID, f.Source, f.Content)
	}
	for _, name := range res.SectionsMayMention {
		fmt.Fprintf(stdout, "profile section %s may still mention it; change it with: mnemo profile set|clear --section %s --user %s%s\n", name, name, scope.UserID, agentFlag(scope))
	}
	fmt.Fprintf(stdout, "deleted %d fact(s) and %d exchange(s) of %s", len(res.FactsRemoved)+len(res.DerivedFactsRemoved), len(res.TurnsRemoved), scope.Key())
	if res.VersionsScrubbed > 0 {
		fmt.Fprintf(stdout, ", and %d earlier version(s) of its memory that held them", res.VersionsScrubbed)
	}
	fmt.Fprintln(stdout)
	return exitOK
}

// forgetScope deletes a user's memory (every agent's too) or one agent's,
// after showing what it will delete; without --yes it only shows.
func forgetScope(ctx context.Context, c *call, store memory.Store, scope memory.Scope) int {
	stdout := c.stdout
	scopes, err := store.Scopes(ctx)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	doomed := scopesOf(scopes, scope)
	if len(doomed) == 0 {
		fmt.Fprintf(stdout, "nothing is stored for %s\n", scope.Key())
		return exitOK
	}
	for _, sc := range doomed {
		fmt.Fprintf(stdout, "memory of %s: turn log, memory.json and its versions\n", sc.Key())
	}
	if !c.args.flag("yes") {
		return c.fail(exitUsage, "this cannot be undone; run again with --yes to delete the memory listed above")
	}
	svc, err := openService(c.cfg, store, c.log, withoutModels, nil)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer svc.Close(ctx)
	if err := svc.ForgetScope(ctx, scope.UserID, scope.AgentName); err != nil {
		return c.fail(exitError, "%v", err)
	}
	fmt.Fprintf(stdout, "deleted %d memory scope(s) of %s\n", len(doomed), scope.Key())
	return exitOK
}
