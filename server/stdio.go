package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/redact"
	"github.com/mnemo-mcp/mnemo/tools"
)

// runServe is "mnemo serve", what MCP hosts run.
func runServe(ctx context.Context, c *call) int {
	if c.args.has("http") || c.args.flag("insecure-no-auth") || len(c.args.positional) > 0 {
		return runServeHTTP(ctx, c) // serve_http.go
	}
	// A host runs many MCP servers side by side: once the default
	// scope is loaded, trade a little GC CPU for a smaller footprint
	// (GC percent 35: peak RSS at 5,000 stored exchanges 52.7 MB at
	// 100 → 49 MB; at 100,000, 252 → 232 MB, retrieval p50
	// unchanged). GOGC in the environment overrides this.
	lowGC := c.getenv("GOGC") == ""
	if err := serve(ctx, c.cfg, c.stdin, c.stdout, c.log, lowGC); err != nil {
		c.log.Error("mnemo serve failed", "err", err)
		return exitError
	}
	return exitOK
}

// serveGCPercent is the GC percent serve runs with once the default
// scope is loaded, unless GOGC is set.
const serveGCPercent = 35

// serve answers MCP requests on stdin/stdout until stdin is closed or ctx
// is cancelled (SIGINT/SIGTERM); both are a clean shutdown. lowGC lowers
// the GC percent to serveGCPercent once the default scope is loaded.
func serve(ctx context.Context, cfg *Config, stdin io.Reader, stdout io.Writer, log *slog.Logger, lowGC bool) (err error) {
	// Nothing costly runs before the first answer (initialize, or the
	// first request of a client that sends none): the token encoding and
	// the default scope load once it is written, or when serve returns
	// without one.
	answered := make(chan struct{})
	markAnswered := sync.OnceFunc(func() { close(answered) })
	defer markAnswered()
	// What the memory service and its store log also goes to the client
	// (notifications/message, at the level it sets); stderr is unchanged.
	clientLog := tools.NewClientLog(log.Handler())
	store, err := openStore(ctx, cfg, slog.New(clientLog))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	svc, err := openService(cfg, store, slog.New(clientLog), withModels, answered)
	if err != nil {
		return err
	}

	mcpServer := newMCPServer(svc, cfg, tools.WithClientLog(clientLog), tools.WithAfterFirstAnswer(markAnswered))
	stdio := server.NewStdioServer(mcpServer)
	stdio.SetErrorLogger(slog.NewLogLogger(log.Handler(), slog.LevelError))
	log.Info("serving MCP on stdio",
		"version", version(), "storage", storageName(cfg), "user_id", cfg.Memory.UserID,
		"token_encoding", cfg.TokenEncoding, "llm", llmState(cfg))

	if problem, fix := cfg.dataDirProblem(); problem != "" {
		log.Warn(problem, "fix", fix)
	}
	// A terminal, not any character device: a host (or a script) may
	// start the server with stdin from /dev/null.
	if isTerminal(stdin) {
		log.Warn("stdin is a terminal: mnemo serve expects an MCP host on stdin/stdout; try 'mnemo demo' or 'mnemo help'")
	}

	// Once initialize is answered, load the default scope while the host
	// lists the tools, so that its first retrieval does not wait for the
	// turn log to be read and indexed, then resume the updates that were
	// pending when the last process stopped; neither delays the first
	// answers.
	stopStart := startService(ctx, svc, log, lowGC, answered)

	out := &lockedWriter{w: stdout}
	err = stdio.Listen(ctx, newStdioGuard(stdin, out, maxRequestLine(cfg.Memory)), out)
	switch {
	case err == nil:
		log.Info("stdin closed; shutting down", "grace", cfg.ShutdownGrace)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		log.Info("signal received; shutting down", "grace", cfg.ShutdownGrace)
		err = nil
	default:
		err = fmt.Errorf("serve stdio: %w", err)
	}
	stopStart()
	// Every acknowledged turn is already durable (add_memory answers after
	// the fsync); Close only runs pending memory updates within the grace
	// and leaves the rest pending for the next start.
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	svc.Close(grace)
	return err
}

// newMCPServer is the MCP server over svc, told what the configuration
// means for the host's model.
func newMCPServer(svc *engine.Service, cfg *Config, opts ...tools.Option) *server.MCPServer {
	return tools.NewServer(svc, version(), append([]tools.Option{
		tools.WithDefaultUser(cfg.Memory.UserID),
		tools.WithLLMConfigured(cfg.LLM.Configured()),
	}, opts...)...)
}

// llmState describes the updater's model for the start-up log line; it
// never includes the API key.
func llmState(cfg *Config) string {
	if !cfg.LLM.Configured() {
		return "not configured, and none is needed (the host's model passes the facts with add_memory; turns are stored and searchable)"
	}
	base := cfg.LLM.BaseURL
	if base == "" {
		base = openai.DefaultBaseURL
	}
	return cfg.LLM.Model + " at " + redact.URL(base)
}
