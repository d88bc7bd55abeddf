package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// demoThread is the conversation the scripted exchanges belong to.
const demoThread = "demo-chat"

// demoStep is one scripted add_memory call.
type demoStep struct {
	title string
	args  map[string]any
}

// fact is one entry of add_memory's facts, as the host's model passes it.
func fact(category, content string) map[string]any {
	return map[string]any{"category": category, "content": content}
}

// demoScript is a developer introducing themselves over a few exchanges,
// with one correction, one exchange in Chinese and one agent turn with
// tool traffic and an uploaded file that the filter removes. Like a host
// with no extraction model configured, each call passes the exchange's
// lasting facts (none for the file question), the correction as a fact of
// category correction.
var demoScript = []demoStep{
	{"introduction", map[string]any{
		"user_input":     "Hi! I'm Maya, a backend developer in Lisbon. I'm building tidewater, a CLI that syncs tide tables for sailing clubs.",
		"agent_response": "Nice to meet you, Maya! tidewater sounds useful. What are you working on in it right now?",
		"facts": []map[string]any{
			fact("context", "Maya is a backend developer in Lisbon"),
			fact("goal", "Builds tidewater, a CLI that syncs tide tables for sailing clubs"),
		},
	}},
	{"a wrong guess", map[string]any{
		"user_input":     "Right now I'm adding offline caching so it works on boats without signal.",
		"agent_response": "Good idea. Since your project is in Python, a SQLite cache via the sqlite3 module would be the simplest start.",
		"facts":          []map[string]any{fact("goal", "Is adding offline caching to tidewater so it works on boats without signal")},
	}},
	{"a correction", map[string]any{
		"user_input":     "That's wrong, I use Go not Python. tidewater is written in Go 1.26 and I want to keep it dependency-free.",
		"agent_response": "Sorry about that! For Go without dependencies, a file cache with atomic renames under os.UserCacheDir works well.",
		"facts": []map[string]any{
			{"category": "correction", "content": "tidewater is written in Go 1.26, kept dependency-free; suggest Go, not Python",
				"source_error": "assumed tidewater was a Python project"},
		},
	}},
	{"in Chinese", map[string]any{
		"user_input":     "以后关于部署的问题请用中文回答。我们每周五把 tidewater 部署到 Fly.io。",
		"agent_response": "好的，以后部署相关的问题我会用中文回答。每周五部署到 Fly.io，我记住了。",
		"facts": []map[string]any{
			fact("preference", "Wants questions about deployment answered in Chinese"),
			fact("context", "Deploys tidewater to Fly.io every Friday"),
		},
	}},
	{"tool call and uploaded file (filtered)", map[string]any{
		"messages": []map[string]any{
			{"role": "system", "content": "You are a coding assistant with file tools."},
			{"role": "user", "content": "<uploaded_files>\n/mnt/data/lisbon_tides.csv\n</uploaded_files>\nWhy are the high-tide times in this CSV an hour off?"},
			{"role": "assistant", "content": "", "tool_calls": []map[string]any{{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": `{"path":"/mnt/data/lisbon_tides.csv"}`},
			}}},
			{"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "date,high_tide\n2025-06-01,06:12+00:00"},
			{"role": "assistant", "content": "The CSV stores UTC offsets, but tidewater parses the times as Europe/Lisbon local time, so summer dates shift by an hour. Parse with time.Parse and the offset instead."},
		},
	}},
	{"reinforcement", map[string]any{
		"user_input":     "Perfect. That's exactly what I wanted, keep doing that: short answers with Go code.",
		"agent_response": "Will do: short answers with Go snippets.",
		"facts":          []map[string]any{fact("preference", "Likes short answers with Go code")},
	}},
}

// demoQueries are asked with retrieve_memory after the script ran.
var demoQueries = []string{
	"Which programming language is tidewater written in?",
	"部署 Fly.io",
}

// runDemo plays demoScript through the real MCP server with the in-process
// client and prints what was stored and what retrieval returns. It uses a
// temporary data dir unless --data-dir was given.
func runDemo(ctx context.Context, c *call) int {
	if err := demo(ctx, c.cfg, c.stdout, c.log); err != nil {
		c.log.Error("mnemo demo failed", "err", err)
		return exitError
	}
	return exitOK
}

// demo is runDemo's work.
func demo(ctx context.Context, cfg *Config, stdout io.Writer, log *slog.Logger) (err error) {
	p := &printer{w: stdout}
	// The demo never writes its scripted conversation into a shared
	// database: it runs on a data directory.
	cfg.Storage = ""
	dirNote := "(from " + cfg.origin["data_dir"] + ")"
	if !strings.HasPrefix(cfg.origin["data_dir"], "flag") {
		tmp, err := os.MkdirTemp("", "mnemo-demo-")
		if err != nil {
			return fmt.Errorf("create demo data dir: %w", err)
		}
		defer os.RemoveAll(tmp)
		cfg.DataDir = tmp
		dirNote = "(temporary, removed at the end; pass --data-dir DIR to keep it)"
	}
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	svc, err := openService(cfg, store, log, withModels, nil)
	if err != nil {
		return err
	}
	defer svc.Close(context.WithoutCancel(ctx))

	c, err := client.NewInProcessClient(newMCPServer(svc, cfg))
	if err != nil {
		return fmt.Errorf("start in-process client: %w", err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("start in-process client: %w", err)
	}
	var initReq mcp.InitializeRequest
	initReq.Params.ClientInfo = mcp.Implementation{Name: "mnemo-demo", Version: version()}
	initRes, err := c.Initialize(ctx, initReq)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}

	p.printf("mnemo demo: a scripted conversation sent through the real MCP server\n\n")
	p.printf("Each step is an add_memory call an assistant makes after an exchange, passing\n")
	p.printf("the exchange and its lasting facts; then retrieve_memory is called as it would\n")
	p.printf("be before answering the next message.\n\n")
	p.printf("  server     %s %s (protocol %s)\n", initRes.ServerInfo.Name, initRes.ServerInfo.Version, initRes.ProtocolVersion)
	p.printf("  tools      %s\n", strings.Join(names, ", "))
	p.printf("  data dir   %s %s\n", cfg.DataDir, dirNote)
	p.printf("  thread     %s, user %s\n", demoThread, cfg.Memory.UserID)

	for i, step := range demoScript {
		args := maps.Clone(step.args)
		args["thread_id"] = demoThread
		var res memory.AddResult
		if err := callTool(ctx, c, "add_memory", args, &res); err != nil {
			return err
		}
		p.heading(fmt.Sprintf("%d/%d add_memory: %s", i+1, len(demoScript), step.title))
		p.exchange(step.args)
		p.printf("  stored     %s\n", orNone(strings.Join(res.TurnIDs, ", ")))
		p.printf("  filter     %s\n", describeFilter(res.Filter))
		p.printf("  signals    %s\n", describeSignals(res.Signals))
		for _, f := range res.Facts {
			p.printf("  fact       %s: %s\n", describeFact(f), clip(f.Content, 80))
		}
		if res.Ask != "" {
			p.printf("  asks       %s\n", res.Ask)
		}
		if res.Note != "" {
			p.printf("  note       %s\n", res.Note)
		}
	}

	for _, q := range demoQueries {
		var res memory.RetrieveResult
		if err := callTool(ctx, c, "retrieve_memory", map[string]any{"query": q, "thread_id": demoThread}, &res); err != nil {
			return err
		}
		p.heading("retrieve_memory: " + q)
		p.printf("  %d matching past exchanges (of %d stored); best first:\n", len(res.Pages), res.StoredTurns)
		for i, pg := range res.Pages {
			if i == 3 {
				p.printf("    ...\n")
				break
			}
			p.printf("    %.3f  %s\n", pg.Score, clip(pg.User, 90))
		}
		p.printf("\n  injection text (%d tokens) - what the host puts in front of its model:\n\n", res.InjectionTokens)
		p.indent(res.Injection, "    ")
	}

	var prof memory.ProfileResult
	if err := callTool(ctx, c, "get_user_profile", map[string]any{}, &prof); err != nil {
		return err
	}
	p.heading("get_user_profile")
	p.printf("  stored turns   %d\n", prof.StoredTurns)
	p.printf("  facts          %d\n", len(prof.Facts))
	if prof.Pending.LLM == memory.KeylessMode {
		p.printf("  extraction     %s\n", prof.Pending.LLM)
	} else {
		p.printf("  pending        %d turns waiting for the memory updater (LLM: %s)\n", prof.Pending.Turns, prof.Pending.LLM)
	}
	if prof.Empty {
		p.printf("  profile        empty: nothing has been learned yet\n")
	}

	var flush memory.FlushResult
	if err := callTool(ctx, c, "flush_memory", map[string]any{"thread_id": demoThread}, &flush); err != nil {
		return err
	}
	p.heading("flush_memory")
	p.printf("  processed      %d turns, %d facts added\n", flush.TurnsProcessed, len(flush.FactsAdded))
	if flush.Reason != "" {
		p.printf("  why            %s\n", flush.Reason)
	}

	p.heading("files in the data dir")
	p.files(cfg.DataDir)
	p.printf("\nEvery exchange above is stored durably and searchable, and the facts the host\n")
	p.printf("passed are the user's long-term memory: no API key is needed.\n")
	p.printf("Run 'mnemo help' for settings, and see README.md to connect mnemo to your MCP host.\n")
	return p.err
}

// callTool calls a tool and decodes its structured result into out; a tool
// error result becomes an error.
func callTool(ctx context.Context, c *client.Client, name string, args map[string]any, out any) error {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return fmt.Errorf("call %s: %w", name, err)
	}
	text := ""
	for _, content := range res.Content {
		if t, ok := content.(mcp.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		return fmt.Errorf("call %s: tool error: %s", name, text)
	}
	raw := []byte(res.RawStructuredContent)
	if len(raw) == 0 && res.StructuredContent != nil {
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return fmt.Errorf("call %s: %w", name, err)
		}
	}
	if len(raw) == 0 {
		raw = []byte(text)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("call %s: decode result: %w", name, err)
	}
	return nil
}

// printer writes the demo report and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) heading(title string) {
	p.printf("\n== %s %s\n", title, strings.Repeat("=", max(3, 72-len(title))))
}

func (p *printer) indent(text, prefix string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		p.printf("%s%s\n", prefix, line)
	}
}

// exchange prints the messages of an add_memory call.
func (p *printer) exchange(args map[string]any) {
	if u, ok := args["user_input"].(string); ok {
		p.printf("  user       %s\n  assistant  %s\n", clip(u, 100), clip(args["agent_response"].(string), 100))
		return
	}
	msgs, _ := args["messages"].([]map[string]any)
	for _, m := range msgs {
		content, _ := m["content"].(string)
		if _, ok := m["tool_calls"]; ok {
			content = "(calls tool read_file)"
		}
		p.printf("  %-10s %s\n", m["role"], clip(strings.ReplaceAll(content, "\n", " "), 100))
	}
}

// files lists what the store wrote, relative to dir.
func (p *printer) files(dir string) {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		p.printf("  %-40s %6d bytes  %s\n", filepath.ToSlash(rel), info.Size(), info.Mode().Perm())
		return nil
	})
	if err != nil {
		p.printf("  (cannot list: %v)\n", err)
	}
}

func describeFilter(r memory.FilterReport) string {
	parts := []string{fmt.Sprintf("kept %d messages", r.Kept)}
	for _, d := range []struct {
		n    int
		what string
	}{
		{r.DroppedSystem, "system"},
		{r.DroppedToolCalls, "assistant tool call"},
		{r.DroppedTool, "tool result"},
		{r.DroppedEmpty, "empty"},
		{r.DroppedUploadOnly, "upload-only user message"},
		{r.DroppedUploadAnswer, "reply to an upload-only message"},
	} {
		if d.n > 0 {
			parts = append(parts, fmt.Sprintf("dropped %d %s", d.n, d.what))
		}
	}
	if r.StrippedUploads > 0 {
		parts = append(parts, fmt.Sprintf("stripped %d <uploaded_files> block", r.StrippedUploads))
	}
	return strings.Join(parts, ", ")
}

// describeFact says what became of a fact passed with an exchange.
func describeFact(f memory.HostFactResult) string {
	switch f.Status {
	case memory.HostFactRefused:
		return "refused (" + f.Reason + ")"
	case memory.HostFactMerged:
		return "merged with " + f.FactID
	}
	return "kept as " + f.FactID
}

func describeSignals(s memory.Signals) string {
	switch {
	case s.Correction && s.Reinforcement:
		return "correction and reinforcement"
	case s.Correction:
		return "correction (the user corrected the assistant: memory asks for a correction fact)"
	case s.Reinforcement:
		return "reinforcement (the user approved the approach)"
	}
	return "none"
}

// clip shortens s to at most n runes.
