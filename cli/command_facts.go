package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// The facts commands change and list facts through the same memory
// service methods as the save_memory, update_memory and list_memories
// tools, so validation, deduplication, max_facts and the fact history are
// the same; changes are recorded with source "cli".

var (
	flagCategory   = flagSpec{name: "category", value: "C", doc: "one of " + strings.Join(memory.Categories, ", ")}
	flagConfidence = flagSpec{name: "confidence", value: "X", doc: "how sure, in (0, 1]"}
)

// openMemory opens the store and the memory service for a command that
// changes or reads memory without the LLM; close closes both.
func (c *call) openMemory(ctx context.Context) (svc *engine.Service, close func(context.Context), code int, ok bool) {
	store, err := openStore(ctx, c.cfg, c.log)
	if err != nil {
		return nil, nil, c.fail(exitError, "%v", err), false
	}
	svc, err = openService(c.cfg, store, c.log, withoutModels, nil)
	if err != nil {
		store.Close()
		return nil, nil, c.fail(exitError, "%v", err), false
	}
	return svc, func(ctx context.Context) { svc.Close(context.WithoutCancel(ctx)); store.Close() }, exitOK, true
}

// memoryFail reports an error of the memory service, its argument names
// replaced by the flags (pairs for strings.NewReplacer): a usage error
// when the input was at fault or nothing was found.
func (c *call) memoryFail(err error, scope memory.Scope, flags ...string) int {
	code := exitError
	if errors.Is(err, memory.ErrInvalidInput) || errors.Is(err, memory.ErrNotFound) {
		code = exitUsage
	}
	return c.fail(code, "%s", strings.NewReplacer(flags...).Replace(cliMessage(err, scope)))
}

// confidenceFlag parses --confidence.
func (c *call) confidenceFlag() (*float64, error) {
	if !c.args.has("confidence") {
		return nil, nil
	}
	v, err := strconv.ParseFloat(c.args.str("confidence"), 64)
	if err != nil {
		return nil, fmt.Errorf("--confidence %q is not a number", c.args.str("confidence"))
	}
	return &v, nil
}

// runFactsAdd is "mnemo facts add TEXT".
func runFactsAdd(ctx context.Context, c *call) int {
	content := strings.Join(c.args.positional, " ")
	if strings.TrimSpace(content) == "" {
		return c.fail(exitUsage, "give the fact: mnemo facts add [--category C] [--confidence X] TEXT")
	}
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	conf, err := c.confidenceFlag()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	svc, closeMem, code, ok := c.openMemory(ctx)
	if !ok {
		return code
	}
	defer closeMem(ctx)
	req := memory.SaveFactRequest{UserID: scope.UserID, AgentName: scope.AgentName, Content: content, Category: c.args.str("category"), Source: memory.SourceCLI}
	if conf != nil {
		if *conf == 0 {
			return c.fail(exitUsage, "--confidence 0 is not between 0 and 1; leave it out for the default")
		}
		req.Confidence = *conf
	}
	res, err := svc.SaveFact(ctx, req)
	if err != nil {
		return c.memoryFail(err, scope, "category:", "--category:", "confidence:", "--confidence:")
	}
	if c.args.flag("json") {
		return writeJSON(c, res)
	}
	if res.Duplicate {
		fmt.Fprintf(c.stdout, "already stored as %s: %s (nothing changed)\n", res.Fact.ID, res.Fact.Content)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "saved fact %s in %s (%s, %.2f): %s\n", res.Fact.ID, res.Scope.Key(), res.Fact.Category, res.Fact.Confidence, res.Fact.Content)
	for _, n := range res.Notes {
		fmt.Fprintf(c.stdout, "note: %s\n", n)
	}
	if len(res.Evicted) > 0 {
		fmt.Fprintf(c.stdout, "dropped to stay within max_facts: %s\n", strings.Join(res.Evicted, ", "))
	}
	return exitOK
}

// runFactsEdit is "mnemo facts edit ID [--content TEXT] [--category C]
// [--confidence X]".
func runFactsEdit(ctx context.Context, c *call) int {
	if len(c.args.positional) != 1 {
		return c.fail(exitUsage, "name the fact: mnemo facts edit ID [--content TEXT] [--category C] [--confidence X]")
	}
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	req := memory.UpdateFactRequest{UserID: scope.UserID, AgentName: scope.AgentName, ID: c.args.positional[0], Source: memory.SourceCLI}
	if c.args.has("content") {
		v := c.args.str("content")
		req.Content = &v
	}
	if c.args.has("category") {
		v := c.args.str("category")
		req.Category = &v
	}
	if req.Confidence, err = c.confidenceFlag(); err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if req.Content == nil && req.Category == nil && req.Confidence == nil {
		return c.fail(exitUsage, "say what to change: --content TEXT, --category C or --confidence X")
	}
	svc, closeMem, code, ok := c.openMemory(ctx)
	if !ok {
		return code
	}
	defer closeMem(ctx)
	res, err := svc.UpdateFact(ctx, req)
	if err != nil {
		return c.memoryFail(err, scope, "content:", "--content:", "category:", "--category:", "confidence:", "--confidence:")
	}
	if c.args.flag("json") {
		return writeJSON(c, res)
	}
	if len(res.Changed) == 0 {
		fmt.Fprintf(c.stdout, "fact %s already says that; nothing changed\n", res.Fact.ID)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "changed %s of fact %s in %s: %s (%s, %.2f)\n", strings.Join(res.Changed, ", "), res.Fact.ID, res.Scope.Key(), res.Fact.Content, res.Fact.Category, res.Fact.Confidence)
	return exitOK
}

// runFactsRestore is "mnemo facts restore".
func runFactsRestore(ctx context.Context, c *call) int {
	if len(c.args.positional) != 1 {
		return c.fail(exitUsage, "name the fact: mnemo facts restore ID")
	}
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	svc, closeMem, code, ok := c.openMemory(ctx)
	if !ok {
		return code
	}
	defer closeMem(ctx)
	res, err := svc.RestoreFact(ctx, memory.RestoreFactRequest{UserID: scope.UserID, AgentName: scope.AgentName, ID: c.args.positional[0], Source: memory.SourceCLI})
	if err != nil {
		return c.memoryFail(err, scope, "id:", "ID:")
	}
	if c.args.flag("json") {
		return writeJSON(c, res)
	}
	fmt.Fprintf(c.stdout, "restored fact %s in %s: %s (%s, %.2f)\n", res.Fact.ID, res.Scope.Key(), res.Fact.Content, res.Fact.Category, res.Fact.Confidence)
	return exitOK
}

// runFactsList is "mnemo facts list".
func runFactsList(ctx context.Context, c *call) int {
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	req := memory.ListRequest{UserID: scope.UserID, AgentName: scope.AgentName, Kind: memory.ListFacts,
		Category: c.args.str("category"), ThreadID: c.args.str("thread"), Text: c.args.str("text")}
	if conf, err := c.confidenceFlag(); err != nil {
		return c.fail(exitUsage, "%v", err)
	} else if conf != nil {
		req.MinConfidence = *conf
	}
	if req.Limit, err = c.args.int("limit", 0); err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if req.Offset, err = c.args.int("offset", 0); err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if dataDirMissing(c.cfg) {
		if c.args.flag("json") {
			return writeJSON(c, &memory.ListResult{Scope: scope, Kind: memory.ListFacts, Facts: []memory.Fact{}})
		}
		fmt.Fprintf(c.stdout, "no facts for %s: %s\n", scope.Key(), noMemoryIn(c.cfg.DataDir))
		return exitOK
	}
	svc, closeMem, code, ok := c.openMemory(ctx)
	if !ok {
		return code
	}
	defer closeMem(ctx)
	res, err := svc.List(ctx, req)
	if err != nil {
		return c.memoryFail(err, scope, "min_confidence", "--confidence", "limit:", "--limit:", "offset:", "--offset:")
	}
	if c.args.flag("json") {
		if res.Facts == nil {
			res.Facts = []memory.Fact{}
		}
		return writeJSON(c, res)
	}
	writeFactsList(c.stdout, res)
	return exitOK
}

// writeFactsList prints one page of facts.
func writeFactsList(w io.Writer, res *memory.ListResult) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s", plural(res.Total, "fact"), res.Scope.Key())
	if len(res.Facts) < res.Total {
		fmt.Fprintf(&b, " (%d-%d shown)", res.Offset+1, res.Offset+len(res.Facts))
	}
	b.WriteString("\n")
	if len(res.Facts) > 0 {
		writeFactTable(&b, res.Facts, nil)
	}
	if res.NextOffset > 0 {
		fmt.Fprintf(&b, "more: --offset %d\n", res.NextOffset)
	}
	io.WriteString(w, b.String())
}
