package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-mcp/mnemo/cli/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/memory/update"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// isHistoryFormat reports whether format is imported into an existing
// scope (a chat history or a knowledge graph) rather than into an empty
// one.
func isHistoryFormat(format string) bool {
	return format == importers.FormatChatGPT || format == importers.FormatClaude || format == importers.FormatGraph
}

// historyFile is the file of a history export at path: path itself, or
// the conversations.json or memory.jsonl in the directory path (an
// unpacked export); "" when path is a directory without one.
func historyFile(path string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return path
	}
	for _, name := range []string{"conversations.json", "memory.jsonl"} {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			return filepath.Join(path, name)
		}
	}
	return ""
}

// runImportHistory is mnemo import for a ChatGPT or Claude export or a
// knowledge graph: read and check everything, then write it in one
// append (turns) or one document update (facts), adding to what the
// scope holds. --dry-run stops before writing.
func runImportHistory(ctx context.Context, e *call, path, format string) int {
	for _, f := range []string{"from-user", "from-agent", "thread", "pending"} {
		if e.args.str(f) != "" || e.args.flag(f) {
			return e.fail(exitUsage, "--%s does not apply to a %s: conversations keep their own threads and wait for extraction", f, formatTitle(format))
		}
	}
	if e.args.str("graph-user") != "" && format != importers.FormatGraph {
		return e.fail(exitUsage, "--graph-user names the user's entity of a knowledge graph (memory.jsonl), not of a %s", formatTitle(format))
	}
	scope := memory.Scope{UserID: cmp.Or(e.args.str("user"), e.cfg.Memory.UserID), AgentName: e.args.str("agent")}
	if err := scope.Validate(); err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	file := historyFile(path)
	if file == "" {
		return e.fail(exitUsage, "%s holds no conversations.json or memory.jsonl; name the file of the export", path)
	}
	data, err := readImportFile(file)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	if format == importers.FormatGraph {
		return importGraph(ctx, e, file, data, scope)
	}
	var convs []importers.Conversation
	if format == importers.FormatChatGPT {
		convs, err = importers.ParseChatGPT(data)
	} else {
		convs, err = importers.ParseClaude(data)
	}
	if err != nil {
		return e.fail(exitError, "%s (%s): nothing imported: %v", file, formatTitle(format), err)
	}
	return importChats(ctx, e, file, format, convs, scope)
}

// importChats writes the turns of convs into scope and, with a model
// configured, extracts facts from them.
func importChats(ctx context.Context, e *call, file, format string, convs []importers.Conversation, scope memory.Scope) int {
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	stored, err := store.ReadTurns(ctx, scope, 0)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	seen := make(map[string]bool, len(stored))
	for _, t := range stored {
		if t.IdempotencyKey != "" {
			seen[t.ThreadID+"\x00"+t.IdempotencyKey] = true
		}
	}
	prog := newProgress(e.stderr, "reading conversations", len(convs))
	plan := planChat(e.cfg.Memory, scope, format, convs, seen, time.Now().UTC(),
		func() string { return "turn_" + uuid.Must(uuid.NewV7()).String() }, prog.set)
	prog.done()

	w := e.stdout
	verb := "imported"
	if e.args.flag("dry-run") {
		verb = "would import"
	}
	fmt.Fprintf(w, "%s from %s (%s) into %s: %s in %s", verb, file, formatTitle(format), scope.Key(),
		plural(len(plan.turns), "turn"), plural(len(plan.threads), "thread"))
	if len(plan.turns) > 0 {
		from, to := span(plan.turns)
		fmt.Fprintf(w, ", %s to %s", from.Format(time.DateOnly), to.Format(time.DateOnly))
	}
	fmt.Fprintf(w, "\nread: %s, %s\n", plural(plan.conversations, "conversation"), plural(plan.messages, "message"))
	for _, s := range plan.skippedLines() {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	if n := plan.filter.StrippedUploads - plan.filter.DroppedUploadOnly; n > 0 {
		fmt.Fprintf(w, "note: the files uploaded with %s are left out; their text is kept\n", plural(n, "message"))
	}
	if plan.undated > 0 {
		fmt.Fprintf(w, "note: %s had no time in the export and are dated now\n", plural(plan.undated, "exchange"))
	}
	if len(plan.redacted) > 0 {
		fmt.Fprintf(w, "note: %s\n", redactedNote(plan.redacted))
	}

	if !e.args.flag("dry-run") && len(plan.turns) > 0 {
		if _, err := store.AppendTurns(ctx, scope, plan.turns); err != nil {
			return e.fail(exitError, "%s: nothing imported: %v", file, err)
		}
	}

	// The threads of this export that wait for extraction, oldest first:
	// the new turns, and those of an earlier import still pending.
	threads := map[string]bool{}
	for _, c := range convs {
		threads[historyThread(format, c.ID)] = true
	}
	pending, err := pendingThreads(ctx, store, scope, threads, plan.turns, e.args.flag("dry-run"))
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	nPending := 0
	for _, t := range pending {
		nPending += len(t.turns)
	}
	if nPending == 0 {
		return exitOK
	}
	if !e.cfg.LLM.Configured() {
		fmt.Fprintf(w, "facts: no extraction model is set, and none is needed: %s stored and searchable; the facts come from the host's model as it passes them with add_memory (facts); an extraction model set later (llm_base_url) would also read them, oldest first\n",
			plural(nPending, "imported turn"))
		return exitOK
	}
	est := estimateExtraction(e.cfg, pending)
	fmt.Fprintf(w, "extraction: %s of %s, oldest first: about %d tokens in %s (%d prompt, %d reply)%s\n",
		plural(nPending, "turn"), plural(len(pending), "thread"), est.prompt+est.reply, plural(est.calls, "model call"),
		est.prompt, est.reply, budgetDays(e.cfg.Memory.DailyTokenBudget, est.prompt+est.reply))
	if e.args.flag("dry-run") {
		fmt.Fprintln(w, "dry run: nothing written")
		return exitOK
	}
	return extract(ctx, e, store, scope, pending)
}

// threadTurns are the pending turns of one thread.
type threadTurns struct {
	thread string
	turns  []memory.Turn
}

// pendingThreads lists the turns of threads not yet reflected in the
// scope's memory (after its watermark), by thread, the thread with the
// oldest turn first. With dryRun the new turns are not stored yet and
// count as pending.
func pendingThreads(ctx context.Context, store memory.Store, scope memory.Scope, threads map[string]bool, added []memory.Turn, dryRun bool) ([]threadTurns, error) {
	doc, err := store.LoadDocument(ctx, scope)
	if err != nil {
		return nil, err
	}
	turns, err := store.ReadTurns(ctx, scope, 0)
	if err != nil {
		return nil, err
	}
	if dryRun {
		turns = append(turns, added...)
	}
	by := map[string][]memory.Turn{}
	for _, t := range turns {
		if threads[t.ThreadID] && (t.Seq == 0 || t.Seq > doc.Watermarks[t.ThreadID]) {
			by[t.ThreadID] = append(by[t.ThreadID], t)
		}
	}
	out := make([]threadTurns, 0, len(by))
	for th, ts := range by {
		out = append(out, threadTurns{thread: th, turns: ts})
	}
	slices.SortFunc(out, func(a, b threadTurns) int {
		return cmp.Or(a.turns[0].Time.Compare(b.turns[0].Time), strings.Compare(a.thread, b.thread))
	})
	return out, nil
}

// The updater's batch bounds (memory/engine/updater.go), for the estimate.
const (
	estimateBatchTurns = 40
	estimateBatchChars = 24000
	// estimateReplyTokens is what one update reply is taken to cost.
	estimateReplyTokens = 500
)

type extractionEstimate struct {
	calls, prompt, reply int
}

// estimateExtraction is what extracting facts from the pending turns will
// cost: one model call per batch as the updater cuts them, each the
// update prompt (without the memory it will hold by then) and its
// conversation, plus a reply.
func estimateExtraction(cfg *Config, pending []threadTurns) extractionEstimate {
	counter, err := tiktoken.NewLazy(cfg.TokenEncoding)
	count := func(s string) int { return len(s) / 4 }
	if err == nil && counter.Load() == nil {
		count = counter.Count
	}
	base := 0
	if p, err := prompts.Update(prompts.UpdateData{Conversation: "x", Today: "2006-01-02"}); err == nil {
		base = count(p)
	}
	var est extractionEstimate
	for _, th := range pending {
		n, chars := 0, 0
		for i, t := range th.turns {
			c := len(t.User) + len(t.Reply)
			if i == 0 || n >= estimateBatchTurns || chars+c > estimateBatchChars {
				est.calls++
				est.prompt += base
				n, chars = 0, 0
			}
			n++
			chars += c
			est.prompt += count("User: "+t.User) + count("Assistant: "+t.Reply)
		}
	}
	est.reply = est.calls * estimateReplyTokens
	return est
}

// budgetDays says how many days of the daily token budget tokens take.
func budgetDays(budget, tokens int) string {
	if budget <= 0 {
		return "; no daily_token_budget is set"
	}
	days := (tokens + budget - 1) / budget
	return fmt.Sprintf("; at daily_token_budget %d that is about %s (the rest waits, pending, for the next day)", budget, plural(days, "day"))
}

// extract runs the updater over the pending threads, oldest first, and
// stops when the daily token budget is spent or the model fails; what is
// left stays pending for the server (or the next import) to take up.
func extract(ctx context.Context, e *call, store memory.Store, scope memory.Scope, pending []threadTurns) int {
	svc, err := openService(e.cfg, store, e.log, withModels, nil)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer svc.Close(context.WithoutCancel(ctx))
	before, err := store.LoadDocument(ctx, scope)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	prog := newProgress(e.stderr, "extracting facts from threads", len(pending))
	done, processed := 0, 0
	stop := ""
	for i, th := range pending {
		prog.set(i)
		res, err := svc.Flush(ctx, memory.FlushRequest{UserID: scope.UserID, AgentName: scope.AgentName, ThreadID: th.thread})
		if err != nil {
			prog.done()
			return e.fail(exitError, "extract facts from thread %s: %v", th.thread, err)
		}
		processed += res.TurnsProcessed
		left := res.Pending.Threads[th.thread] > 0
		if !left {
			done++
		}
		if res.Pending.Deferred != "" || left && res.Reason != "" {
			stop = cmp.Or(res.Pending.Deferred, res.Reason)
			break
		}
	}
	prog.set(len(pending))
	prog.done()
	after, err := store.LoadDocument(ctx, scope)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	fmt.Fprintf(e.stdout, "extracted: %s done, %s processed, facts %d → %d\n", plural(done, "thread"), plural(processed, "turn"), len(before.Facts), len(after.Facts))
	if stop != "" {
		fmt.Fprintf(e.stdout, "waiting: %s; the server takes them up (or run mnemo import again)\n", stop)
	}
	return exitOK
}

// importGraph adds the facts of a knowledge graph to scope's document.
func importGraph(ctx context.Context, e *call, file string, data []byte, scope memory.Scope) int {
	g, err := importers.ParseGraph(data)
	if err != nil {
		return e.fail(exitError, "%s (%s): nothing imported: %v", file, formatTitle(importers.FormatGraph), err)
	}
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	doc, err := store.LoadDocument(ctx, scope)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	now := time.Now().UTC()
	plan, err := planGraph(e.cfg.Memory, scope, g, e.args.str("graph-user"), doc.Facts, now)
	if err != nil {
		return e.fail(exitError, "%s: nothing imported: %v", file, err)
	}
	added := len(plan.facts)
	if !e.args.flag("dry-run") && len(plan.facts) > 0 {
		var ids []string
		_, err := store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
			var err error
			ids, err = plan.apply(d, e.cfg.Memory.MaxFacts, now, update.NewFactID)
			return err
		})
		if err != nil {
			return e.fail(exitError, "%s: nothing imported: %v", file, err)
		}
		added = len(ids)
	}
	printGraphSummary(e.stdout, file, scope, plan, added, e.args.flag("dry-run"))
	return exitOK
}

func printGraphSummary(w io.Writer, file string, scope memory.Scope, p *graphPlan, added int, dryRun bool) {
	verb := "imported"
	if dryRun {
		verb = "would import"
	}
	user := "no entity taken for the user"
	if p.user != "" {
		user = fmt.Sprintf("entity %q taken for the user", p.user)
	}
	fmt.Fprintf(w, "%s from %s (%s) into %s: %s\n", verb, file, formatTitle(importers.FormatGraph), scope.Key(), plural(added, "fact"))
	entities := fmt.Sprintf("%d entities", p.entities)
	if p.entities == 1 {
		entities = "1 entity"
	}
	fmt.Fprintf(w, "read: %s with %s, %s; %s\n", entities, plural(p.observations, "observation"), plural(p.relations, "relation"), user)
	if p.already > 0 {
		fmt.Fprintf(w, "skipped: %s already known or repeated (the same text): not stored twice\n", plural(p.already, "fact"))
	}
	if p.empty > 0 {
		fmt.Fprintf(w, "skipped: %s: nothing to keep\n", plural(p.empty, "empty observation"))
	}
	if p.refused > 0 {
		fmt.Fprintf(w, "skipped: %s the tools would refuse, e.g. %s\n", plural(p.refused, "fact"), p.refusedWhy)
	}
	for _, n := range p.notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(p.redacted) > 0 {
		fmt.Fprintf(w, "note: %s\n", redactedNote(p.redacted))
	}
}

// errNotHistory is returned by detectHistory for content of another
// format.
var errNotHistory = errors.New("not a history export")

// detectHistory tells whether path (a file, or a directory holding
// conversations.json or memory.jsonl) is a ChatGPT or Claude export or a
// knowledge graph.
func detectHistory(path string) (string, error) {
	file := historyFile(path)
	if file == "" {
		return "", errNotHistory
	}
	f, err := openImportFile(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The first record decides; 1 MiB holds it in any export seen.
	head := make([]byte, 1<<20)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	if format := importers.Detect(head[:n]); format != "" {
		return format, nil
	}
	if n == len(head) {
		data, err := readImportFile(file)
		if err != nil {
			return "", err
		}
		if format := importers.Detect(data); format != "" {
			return format, nil
		}
	}
	return "", errNotHistory
}
