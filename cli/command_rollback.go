package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/mnemo-mcp/mnemo/memory"
)

// runRollback is "mnemo rollback": it lists the kept versions of a
// memory document or restores one.
func runRollback(ctx context.Context, c *call) int {
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	to := int64(0)
	if c.args.has("to") {
		v := c.args.str("to")
		to, err = strconv.ParseInt(v, 10, 64)
		if err != nil || to <= 0 {
			return c.fail(exitUsage, "--to %q is not a revision number; run with --list to see them", v)
		}
		if c.args.flag("list") {
			return c.fail(exitUsage, "--list and --to exclude each other: list first, then restore")
		}
	}
	if dataDirMissing(c.cfg) {
		if to > 0 {
			return c.fail(exitError, "%s; there is no revision to restore", noMemoryIn(c.cfg.DataDir))
		}
		fmt.Fprintf(c.stdout, "memory of %s: %s\n", scope.Key(), noMemoryIn(c.cfg.DataDir))
		return exitOK
	}
	store, err := openStore(ctx, c.cfg, c.log)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer store.Close()
	if to > 0 {
		return rollbackTo(ctx, store, scope, to, c.stdout, c.stderr)
	}
	return listVersions(ctx, store, scope, c.stdout, c.stderr)
}

// listVersions prints the current document and the versions kept.
func listVersions(ctx context.Context, store memory.Store, scope memory.Scope, stdout, stderr io.Writer) int {
	cur, err := store.LoadDocument(ctx, scope)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo rollback: %v\n", err)
		return exitError
	}
	vs, err := store.ListVersions(ctx, scope)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo rollback: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "memory of %s: current revision %d, %d facts, saved %s\n", scope.Key(), cur.Revision, len(cur.Facts), fmtTime(cur.LastUpdated))
	if len(vs) == 0 {
		fmt.Fprintln(stdout, "no earlier versions are kept (setting memory_versions)")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tSAVED\tFACTS")
	for _, v := range vs {
		fmt.Fprintf(tw, "%d\t%s\t%d\n", v.Revision, fmtTime(v.Saved), v.Facts)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "restore one with: mnemo rollback --user %s%s --to REVISION\n", scope.UserID, agentFlag(scope))
	return exitOK
}

// rollbackTo restores one kept version.
func rollbackTo(ctx context.Context, store memory.Store, scope memory.Scope, rev int64, stdout, stderr io.Writer) int {
	doc, err := store.RestoreVersion(ctx, scope, rev)
	if errors.Is(err, memory.ErrNotFound) {
		fmt.Fprintf(stderr, "mnemo rollback: revision %d of %s is not kept; run 'mnemo rollback --user %s%s --list' to see those that are\n", rev, scope.Key(), scope.UserID, agentFlag(scope))
		return exitError
	}
	if err != nil {
		fmt.Fprintf(stderr, "mnemo rollback: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "restored revision %d of %s as revision %d (%d facts)\nundo with: mnemo rollback --user %s%s --to %d\n",
		rev, scope.Key(), doc.Revision, len(doc.Facts), scope.UserID, agentFlag(scope), doc.Revision-1)
	return exitOK
}
