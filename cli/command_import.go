package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// runImport is "mnemo import PATH [--format NAME] [--user U] [--agent A]":
// an importers format reads PATH, and the engine's Import stores it under
// the rules of the tools.
func runImport(ctx context.Context, e *call) int {
	if len(e.args.positional) != 1 {
		return e.fail(exitUsage, "name one file or directory: mnemo import [--format chatgpt|claude|memory-graph|mnemo|memoryos|deerflow] [--user U] [--agent A] PATH")
	}
	path := e.args.positional[0]
	opt := newImportOptions(e.cfg.Memory.UserID)
	opt.User, opt.Agent = e.args.str("user"), e.args.str("agent")
	opt.FromUser, opt.FromAgent = e.args.str("from-user"), e.args.str("from-agent")
	opt.Thread, opt.Pending, opt.GraphUser = e.args.str("thread"), e.args.flag("pending"), e.args.str("graph-user")
	for _, id := range []struct{ field, v string }{{"--user", opt.User}, {"--agent", opt.Agent}, {"--thread", opt.Thread}, {"--from-user", opt.FromUser}, {"--from-agent", opt.FromAgent}} {
		if id.v != "" {
			if err := memory.ValidateID(id.field, id.v); err != nil {
				return e.fail(exitUsage, "%v", err)
			}
		}
	}
	var format importers.Format
	if name := e.args.str("format"); name != "" {
		if format = importers.Lookup(name); format == nil {
			return e.fail(exitUsage, "--format %q is not one of %s", name, importers.Names())
		}
	}
	src, err := importers.Open(path, format)
	if err != nil {
		if format == nil {
			return e.fail(exitUsage, "%v", err)
		}
		return e.fail(exitError, "read %s (%s format): %v", path, format.Name(), err)
	}
	if format == nil {
		if format, err = importers.Detect(src); err != nil {
			return e.fail(exitUsage, "%v", err)
		}
	}
	if importers.IsHistory(format) {
		return runImportHistory(ctx, e, src, format, opt)
	}
	if e.args.flag("dry-run") || opt.GraphUser != "" {
		return e.fail(exitUsage, "--dry-run and --graph-user apply to a ChatGPT or Claude export or a knowledge graph, not to a %s", format.Title())
	}
	if (opt.FromUser != "" || opt.FromAgent != "") && format.Name() != "mnemo" {
		return e.fail(exitUsage, "--from-user and --from-agent pick scopes of a mnemo export; a %s source holds one user: name the target with --user and --agent", format.Name())
	}
	parsed, err := format.Parse(src, opt)
	if err != nil {
		return e.fail(exitError, "read %s (%s format): %v", path, format.Name(), err)
	}

	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	svc, err := openService(e.cfg, store, e.log, withoutModels, nil)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer svc.Close(context.WithoutCancel(ctx))
	prog := newProgress(e.stderr, "importing scopes", len(parsed.Scopes))
	res, err := svc.Import(ctx, memory.ImportRequest{Scopes: parsed.Scopes, Progress: func(done, _ int) { prog.set(done) }})
	prog.done()
	if err != nil {
		if errors.Is(err, memory.ErrInvalidInput) {
			return e.fail(exitError, "%s: nothing imported: %v", path, err)
		}
		return e.fail(exitError, "%v", err)
	}
	for _, n := range importNotes(parsed, res) {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	for _, s := range parsed.Scopes {
		fmt.Fprintf(e.stdout, "imported into %s: %s in %s, %s, %d user and %d assistant knowledge entries, %s\n",
			s.Scope.Key(), plural(len(s.Turns), "turn"), plural(countThreads(s.Turns), "thread"), plural(len(s.Doc.Facts), "fact"),
			len(s.Doc.Knowledge), len(s.Doc.AssistantKnowledge), plural(countSections(s.Doc), "profile section"))
	}
	return exitOK
}

// newImportOptions are the importers' options with mnemo's ids and the
// time now.
func newImportOptions(defaultUser string) *importers.Options {
	return &importers.Options{
		DefaultUser: defaultUser,
		Now:         time.Now().UTC(),
		NewTurnID:   func() string { return "turn_" + uuid.Must(uuid.NewV7()).String() },
		NewFactID:   update.NewFactID,
	}
}

// importNotes are the notes of a conversion and, last, the secrets the
// import redacted.
func importNotes(p *importers.Parsed, res *memory.ImportResult) []string {
	out := append([]string{}, p.Notes...)
	if len(res.Redacted) > 0 {
		out = append(out, redactedNote(res.Redacted))
	}
	return out
}

// redactedNote says which secrets an import redacted, by kind.
func redactedNote(found []memory.Redaction) string {
	counts := map[string]int{}
	var kinds []string
	for _, f := range found {
		if counts[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		counts[f.Kind] += f.Count
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return "secrets replaced by [redacted: KIND]: " + strings.Join(parts, ", ")
}

func countThreads(turns []memory.Turn) int {
	threads := map[string]bool{}
	for _, t := range turns {
		threads[t.ThreadID] = true
	}
	return len(threads)
}

func countSections(d *memory.Document) int {
	n := 0
	for _, s := range d.Sections() {
		if strings.TrimSpace(s.Section.Summary) != "" {
			n++
		}
	}
	return n
}

// scopeOf is the scope a chat history or knowledge graph is imported
// into: --user (else the configured user) and --agent.
func scopeOf(e *call) memory.Scope {
	return memory.Scope{UserID: cmp.Or(e.args.str("user"), e.cfg.Memory.UserID), AgentName: e.args.str("agent")}
}
