package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// runSearch is "mnemo search QUERY": the retrieval retrieve_memory runs,
// through the same engine.Service, printed for a terminal or as JSON.
func runSearch(ctx context.Context, e *call) int {
	query := strings.Join(e.args.positional, " ")
	if strings.TrimSpace(query) == "" {
		return e.fail(exitUsage, "give the text to search for: mnemo search [--user U] [--agent A] [--limit N] [--json] [--injection] QUERY")
	}
	scope, err := e.scope()
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	limit, err := e.args.int("limit", 0)
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	maxTokens, err := e.args.int("max-tokens", 0)
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	if limit < 0 || maxTokens < 0 {
		return e.fail(exitUsage, "--limit and --max-tokens must be positive")
	}
	if dataDirMissing(e.cfg) {
		if e.args.flag("json") {
			return writeJSON(e, &memory.RetrieveResult{Pages: []memory.PageHit{}, Scope: scope, ThreadID: e.args.str("thread")})
		}
		fmt.Fprintf(e.stdout, "0 pages for %q in %s: %s\n", query, scope.Key(), noMemoryIn(e.cfg.DataDir))
		return exitOK
	}
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	svc, err := openService(e.cfg, store, e.log, withModels, nil, loadProgress(e.stderr))
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer svc.Close(context.WithoutCancel(ctx))

	res, err := svc.Retrieve(ctx, memory.RetrieveRequest{
		UserID:     scope.UserID,
		AgentName:  scope.AgentName,
		ThreadID:   e.args.str("thread"),
		Query:      query,
		MaxResults: limit,
		MaxTokens:  maxTokens,
	})
	if err != nil {
		// Input errors name the tool's argument; say it with the flag.
		msg := strings.NewReplacer("max_results:", "--limit:", "max_tokens:", "--max-tokens:", "thread_id:", "--thread:").Replace(err.Error())
		return e.fail(exitUsage, "%s", msg)
	}
	if e.args.flag("json") {
		return writeJSON(e, res)
	}
	writeSearch(e.stdout, query, res, e.args.flag("injection"))
	return exitOK
}

// writeSearch prints the ranked pages and, when asked, the injection text.
func writeSearch(w io.Writer, query string, res *memory.RetrieveResult, injection bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q in %s (%s stored, %d not yet reflected in memory)\n",
		plural(len(res.Pages), "page"), query, res.Scope.Key(), plural(res.StoredTurns, "turn"), res.Pending.Turns)
	for i, p := range res.Pages {
		fmt.Fprintf(&b, "\n%2d. score %.4f  %s  thread %s  %s\n", i+1, p.Score, fmtMinute(p.Time), p.ThreadID, p.ID)
		for _, part := range []struct{ who, text string }{{"user:      ", p.User}, {"assistant: ", p.Reply}} {
			if part.text == "" {
				continue
			}
			lines := wrapParagraphs(part.text, textWidth-4-len(part.who))
			for j, l := range lines {
				lead := strings.Repeat(" ", len(part.who))
				if j == 0 {
					lead = part.who
				}
				b.WriteString(strings.TrimRight("    "+lead+l, " ") + "\n")
			}
		}
		if len(p.MetaData) > 0 {
			fmt.Fprintf(&b, "    meta_data: %s\n", p.MetaData)
		}
	}
	if len(res.Facts) > 0 {
		fmt.Fprintf(&b, "\nFacts by relevance (%d)\n", len(res.Facts))
		facts := make([]memory.Fact, len(res.Facts))
		scores := make([]float64, len(res.Facts))
		for i, f := range res.Facts {
			facts[i], scores[i] = f.Fact, f.Score
		}
		writeFactTable(&b, facts, scores)
	}
	if injection {
		fmt.Fprintf(&b, "\nInjection text (%d tokens)\n%s\n", res.InjectionTokens, strings.TrimRight(res.Injection, "\n"))
	}
	io.WriteString(w, b.String())
}
