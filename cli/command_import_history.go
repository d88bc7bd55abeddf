package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// runImportHistory is mnemo import for a ChatGPT or Claude export or a
// knowledge graph: read and check everything, then write it in one
// append (turns) or one document update (facts), adding to what the
// scope holds. --dry-run stops before writing.
func runImportHistory(ctx context.Context, e *call, src importers.Source, format importers.Format, opt *importers.Options) int {
	for _, f := range []string{"from-user", "from-agent", "thread", "pending"} {
		if e.args.str(f) != "" || e.args.flag(f) {
			return e.fail(exitUsage, "--%s does not apply to a %s: conversations keep their own threads and wait for extraction", f, format.Title())
		}
	}
	if opt.GraphUser != "" && format.Name() != "memory-graph" {
		return e.fail(exitUsage, "--graph-user names the user's entity of a knowledge graph (memory.jsonl), not of a %s", format.Title())
	}
	scope := scopeOf(e)
	if err := scope.Validate(); err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	if src.Dir {
		return e.fail(exitUsage, "%s holds no conversations.json or memory.jsonl; name the file of the export", src.Path)
	}
	parsed, err := format.Parse(src, opt)
	if err != nil {
		return e.fail(exitError, "%s (%s): nothing imported: %v", src.Path, format.Title(), err)
	}
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	if parsed.Graph != nil {
		return importGraph(ctx, e, store, src.Path, format, parsed, scope)
	}
	return importChats(ctx, e, store, src.Path, format, parsed, scope)
}

// importWith runs the engine's Import of req over store, on a service
// closed before it returns (the extraction that may follow opens its
// own, with the models).
func importWith(ctx context.Context, e *call, store memory.Store, req memory.ImportRequest) (*memory.ImportResult, error) {
	svc, err := openService(e.cfg, store, e.log, withoutModels, nil)
	if err != nil {
		return nil, err
	}
	defer svc.Close(context.WithoutCancel(ctx))
	return svc.Import(ctx, req)
}

// importChats writes the turns of the parsed conversations into scope
// and, with a model configured, extracts facts from them.
func importChats(ctx context.Context, e *call, store memory.Store, file string, format importers.Format, parsed *importers.Parsed, scope memory.Scope) int {
	dryRun := e.args.flag("dry-run")
	prog := newProgress(e.stderr, "reading conversations", len(parsed.Conversations))
	res, err := importWith(ctx, e, store, memory.ImportRequest{Format: format.Name(), Scope: scope, Conversations: parsed.Conversations,
		DryRun: dryRun, Progress: func(done, _ int) { prog.set(done) }})
	prog.done()
	if err != nil {
		return e.fail(exitError, "%s: nothing imported: %v", file, err)
	}

	w := e.stdout
	verb := "imported"
	if dryRun {
		verb = "would import"
	}
	threads := map[string]bool{}
	for _, t := range res.Turns {
		threads[t.ThreadID] = true
	}
	fmt.Fprintf(w, "%s from %s (%s) into %s: %s in %s", verb, file, format.Title(), scope.Key(),
		plural(len(res.Turns), "turn"), plural(len(threads), "thread"))
	if len(res.Turns) > 0 {
		from, to := span(res.Turns)
		fmt.Fprintf(w, ", %s to %s", from.Format(time.DateOnly), to.Format(time.DateOnly))
	}
	fmt.Fprintf(w, "\nread: %s, %s\n", plural(len(parsed.Conversations), "conversation"), plural(res.Messages, "message"))
	for _, s := range skippedLines(res, e.cfg.Memory.MaxMessageBytes) {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	if n := res.Filter.StrippedUploads - res.Filter.DroppedUploadOnly; n > 0 {
		fmt.Fprintf(w, "note: the files uploaded with %s are left out; their text is kept\n", plural(n, "message"))
	}
	if res.Undated > 0 {
		fmt.Fprintf(w, "note: %s had no time in the export and are dated now\n", plural(res.Undated, "exchange"))
	}
	for _, n := range importNotes(parsed, res) {
		fmt.Fprintf(w, "note: %s\n", n)
	}

	// The threads of this export that wait for extraction, oldest first:
	// the new turns, and those of an earlier import still pending.
	all := map[string]bool{}
	for _, th := range res.Threads {
		all[th] = true
	}
	pending, err := pendingThreads(ctx, store, scope, all, res.Turns, dryRun)
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
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing written")
		return exitOK
	}
	return extract(ctx, e, store, scope, pending)
}

// skippedLines says what a chat import left out and why, one reason a
// line.
func skippedLines(res *memory.ImportResult, maxMessageBytes int) []string {
	f := res.Filter
	var out []string
	add := func(n int, noun, why string) {
		if n > 0 {
			out = append(out, plural(n, noun)+": "+why)
		}
	}
	add(f.DroppedSystem, "system prompt or hidden context message", "never memory (custom instructions and the model's own memory count as such)")
	add(f.DroppedTool, "tool result", "tool traffic is never memory")
	add(f.DroppedToolCalls, "tool call or reasoning step", "not answers")
	add(f.DroppedUploadOnly, "upload-only message", fmt.Sprintf("uploads are never memory (and %s to them left out)", plural(f.DroppedUploadAnswer, "reply")))
	add(f.DroppedEmpty, "empty message", "nothing to keep")
	add(res.Already, "already imported exchange", "the same source message is not stored twice")
	add(res.TooLong, "over-long exchange", fmt.Sprintf("longer than max_message_bytes (the limit is %d); raise it to keep them", maxMessageBytes))
	add(res.Refused, "refused exchange", "the tools would refuse it too, e.g. "+res.RefusedWhy)
	return out
}

// span is the time range of the turns.
func span(turns []memory.Turn) (from, to time.Time) {
	for i, t := range turns {
		if i == 0 || t.Time.Before(from) {
			from = t.Time
		}
		if i == 0 || t.Time.After(to) {
			to = t.Time
		}
	}
	return from, to
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
func importGraph(ctx context.Context, e *call, store memory.Store, file string, format importers.Format, parsed *importers.Parsed, scope memory.Scope) int {
	res, err := importWith(ctx, e, store, memory.ImportRequest{Scope: scope, Facts: parsed.Facts, DryRun: e.args.flag("dry-run")})
	if err != nil {
		return e.fail(exitError, "%s: nothing imported: %v", file, err)
	}
	printGraphSummary(e.stdout, file, format, scope, parsed, res, e.args.flag("dry-run"))
	return exitOK
}

func printGraphSummary(w io.Writer, file string, format importers.Format, scope memory.Scope, p *importers.Parsed, res *memory.ImportResult, dryRun bool) {
	verb := "imported"
	if dryRun {
		verb = "would import"
	}
	g := p.Graph
	user := "no entity taken for the user"
	if g.User != "" {
		user = fmt.Sprintf("entity %q taken for the user", g.User)
	}
	fmt.Fprintf(w, "%s from %s (%s) into %s: %s\n", verb, file, format.Title(), scope.Key(), plural(len(res.Facts), "fact"))
	entities := fmt.Sprintf("%d entities", g.Entities)
	if g.Entities == 1 {
		entities = "1 entity"
	}
	fmt.Fprintf(w, "read: %s with %s, %s; %s\n", entities, plural(g.Observations, "observation"), plural(g.Relations, "relation"), user)
	if res.Already > 0 {
		fmt.Fprintf(w, "skipped: %s already known or repeated (the same text): not stored twice\n", plural(res.Already, "fact"))
	}
	if g.Empty > 0 {
		fmt.Fprintf(w, "skipped: %s: nothing to keep\n", plural(g.Empty, "empty observation"))
	}
	if res.Refused > 0 {
		fmt.Fprintf(w, "skipped: %s the tools would refuse, e.g. %s\n", plural(res.Refused, "fact"), res.RefusedWhy)
	}
	for _, n := range importNotes(p, res) {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
