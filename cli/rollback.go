package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// adminArgs are the arguments of the rollback and forget commands that
// are not settings.
type adminArgs struct {
	user, agent string
	list, yes   bool
	to          int64
	toSet       bool
	// forget only: single facts, exchanges or a whole thread instead of
	// the whole scope.
	facts, turns []string
	thread       string
}

// splitAdminArgs takes the command's own flags out of args and leaves the
// settings flags for loadConfig.
func splitAdminArgs(args []string) (adminArgs, []string, error) {
	var a adminArgs
	var rest []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "user":
			a.user, err = takeValue()
		case "agent":
			a.agent, err = takeValue()
		case "list":
			a.list = true
		case "yes":
			a.yes = true
		case "fact":
			var v string
			if v, err = takeValue(); err == nil {
				a.facts = append(a.facts, v)
			}
		case "turn":
			var v string
			if v, err = takeValue(); err == nil {
				a.turns = append(a.turns, v)
			}
		case "thread":
			a.thread, err = takeValue()
		case "to":
			var v string
			if v, err = takeValue(); err == nil {
				a.to, err = strconv.ParseInt(v, 10, 64)
				if err != nil || a.to <= 0 {
					err = fmt.Errorf("--to %q is not a revision number; run with --list to see them", v)
				}
				a.toSet = true
			}
		default:
			rest = append(rest, args[i])
		}
		if err != nil {
			return a, nil, err
		}
	}
	return a, rest, nil
}

// runAdmin runs "mnemo rollback" or "mnemo forget" on the configured data
// directory. They are meant to run while no server uses it: a running
// server keeps what it has cached until it restarts.
func runAdmin(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	a, rest, err := splitAdminArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, err)
		return exitUsage
	}
	cfg, err := loadConfig(rest, getenv, stderr)
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout)
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, err)
		return exitUsage
	}
	if cfg.DataDir == "" {
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, errNoDataDir)
		return exitUsage
	}
	if a.user == "" && cmd == "rollback" {
		a.user = cfg.Memory.UserID
	}
	scope := memory.Scope{UserID: a.user, AgentName: a.agent}
	if a.user == "" {
		fmt.Fprintf(stderr, "mnemo %s: name the user with --user U (and --agent A for one agent's memory)\n", cmd)
		return exitUsage
	}
	if err := scope.Validate(); err != nil {
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	store, err := files.Open(cfg.DataDir, files.WithLogger(log), files.WithVersions(cfg.Memory.MemoryVersions))
	if err != nil {
		fmt.Fprintf(stderr, "mnemo %s: open data dir %s: %v\n", cmd, cfg.DataDir, err)
		return exitError
	}
	defer store.Close()
	if cmd == "forget" {
		if len(a.facts) > 0 || len(a.turns) > 0 || a.thread != "" {
			return forgetParts(ctx, cfg, store, scope, a, stdout, stderr, log)
		}
		return forget(ctx, cfg, store, scope, a.yes, stdout, stderr, log)
	}
	if a.toSet {
		return rollbackTo(ctx, store, scope, a.to, stdout, stderr)
	}
	return listVersions(ctx, store, scope, stdout, stderr)
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

func agentFlag(scope memory.Scope) string {
	if scope.AgentName == "" {
		return ""
	}
	return " --agent " + scope.AgentName
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
