// Package cli is the command line of mnemo, a Model Context Protocol server that gives an AI
// assistant a long-term memory it maintains itself: the host stores each
// exchange with add_memory and gets back a token-budgeted <memory> text
// from retrieve_memory before it answers.
//
// Usage:
//
//	mnemo [serve] [flags]   serve MCP over stdin/stdout (what hosts run)
//	mnemo demo [flags]      run a scripted conversation through the real server
//	mnemo rollback [--user U] [--agent A] [--list | --to N]
//	                        list or restore earlier versions of a memory
//	mnemo forget --user U [--agent A] --yes
//	mnemo forget --user U [--agent A] [--fact ID]... [--turn ID]... [--thread T] --yes
//	                        delete a user's (or one agent's) memory
//	mnemo show [--user U] [--agent A] [--json] [--facts|--profile|--threads|--sessions]
//	                        print what a memory holds
//	mnemo search [--limit N] [--json] [--injection] QUERY
//	                        run retrieve_memory's search from the terminal
//	mnemo export [--out FILE] [--user U [--agent A] | --all]
//	mnemo import [--format mnemo|memoryos|deerflow] [--user U] [--agent A] PATH
//	                        move memory between data directories and systems
//	mnemo doctor            check the configuration, data directory and endpoints
//	mnemo version           print the version
//	mnemo help              list every flag, environment variable and default
//
// In serve mode stdout carries only JSON-RPC messages; logs go to stderr.
package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/tools"
)

// Exit codes of run.
const (
	exitOK    = 0
	exitError = 1 // the command failed at run time
	exitUsage = 2 // bad command line or configuration
)

// Run is the whole program: it parses args and the configuration (read only
// through getenv), and runs the command. It returns the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, rest := "serve", args
	if len(args) > 0 && (args[0] == "" || args[0][0] != '-') {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "serve", "demo":
	case "rollback", "forget":
		return runAdmin(ctx, cmd, rest, getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, stdout, stderr)
	case "show":
		return runShow(ctx, rest, getenv, stdout, stderr)
	case "search":
		return runSearch(ctx, rest, getenv, stdout, stderr)
	case "export":
		return runExport(ctx, rest, getenv, stdout, stderr)
	case "import":
		return runImport(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, rest, getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "mnemo", version())
		return exitOK
	case "help":
		writeHelp(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "mnemo: unknown command %q\nRun 'mnemo help' for usage.\n", cmd)
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
		fmt.Fprintf(stderr, "mnemo: %v\n", err)
		return exitUsage
	}

	if cmd == "serve" && cfg.DataDir == "" {
		fmt.Fprintf(stderr, "mnemo: %v\n", errNoDataDir)
		return exitUsage
	}

	level := cfg.LogLevel
	if _, set := cfg.origin["log_level"]; cmd == "demo" && !set {
		level = slog.LevelWarn // keep the demo's terminal output readable
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if cmd == "demo" {
		err = runDemo(ctx, cfg, stdout, log)
	} else {
		// A host runs many MCP servers side by side: once the default
		// scope is loaded, trade a little GC CPU for a smaller footprint
		// (GC percent 35: peak RSS at 5,000 stored exchanges 52.7 MB at
		// 100 → 49 MB; at 100,000, 252 → 232 MB, retrieval p50
		// unchanged). GOGC in the environment overrides this.
		lowGC := getenv("GOGC") == ""
		err = serve(ctx, cfg, stdin, stdout, log, lowGC)
	}
	if err != nil {
		log.Error("mnemo "+cmd+" failed", "err", err)
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
	// The token encoding loads once the MCP server is built: both take
	// CPU, and building the server is on the way to the initialize answer.
	built := make(chan struct{})
	defer func() {
		select {
		case <-built:
		default:
			close(built)
		}
	}()
	svc, closeStore, err := openService(cfg, log, built)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()

	mcpServer := newMCPServer(svc, cfg)
	close(built)
	stdio := server.NewStdioServer(mcpServer)
	stdio.SetErrorLogger(slog.NewLogLogger(log.Handler(), slog.LevelError))
	log.Info("serving MCP on stdio",
		"version", version(), "data_dir", cfg.DataDir, "user_id", cfg.Memory.UserID,
		"token_encoding", cfg.Memory.TokenEncoding, "llm", llmState(cfg))

	if f, ok := stdin.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			log.Warn("stdin is a terminal: mnemo serve expects an MCP host on stdin/stdout; try 'mnemo demo' or 'mnemo help'")
		}
	}

	// Load the default scope while the host initializes, so that its
	// first retrieval does not wait for the turn log to be read and
	// indexed, then resume the updates that were pending when the last
	// process stopped; neither delays the first answers.
	startCtx, cancelStart := context.WithCancel(ctx)
	var starting sync.WaitGroup
	starting.Go(func() {
		if err := svc.Preload(startCtx, "", ""); err != nil && startCtx.Err() == nil {
			log.Warn("cannot preload the default user's memory; it is loaded on first use", "err", err)
		}
		if lowGC {
			debug.SetGCPercent(serveGCPercent)
		}
		if err := svc.Start(startCtx); err != nil && startCtx.Err() == nil {
			log.Error("cannot resume pending memory updates", "err", err)
		}
	})

	err = stdio.Listen(ctx, stdin, stdout)
	switch {
	case err == nil:
		log.Info("stdin closed; shutting down", "grace", cfg.Memory.ShutdownGrace)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		log.Info("signal received; shutting down", "grace", cfg.Memory.ShutdownGrace)
		err = nil
	default:
		err = fmt.Errorf("serve stdio: %w", err)
	}
	cancelStart()
	starting.Wait()
	// Every acknowledged turn is already durable (add_memory answers after
	// the fsync); Close only runs pending memory updates within the grace
	// and leaves the rest pending for the next start.
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Memory.ShutdownGrace)
	defer cancel()
	svc.Close(grace)
	return err
}

// openService wires the file store, the token counter and the memory
// service. The returned func closes the store. The token encoding loads in
// the background, once loadAfter is closed (at once when it is nil).
func openService(cfg *Config, log *slog.Logger, loadAfter <-chan struct{}) (*memory.Service, func() error, error) {
	store, err := files.Open(cfg.DataDir, files.WithLogger(log), files.WithVersions(cfg.Memory.MemoryVersions))
	if err != nil {
		return nil, nil, fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	tokens, err := tiktoken.NewLazy(cfg.Memory.TokenEncoding)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("load token encoding %s: %w", cfg.Memory.TokenEncoding, err), store.Close())
	}
	// Loading the BPE ranks takes ~100 ms: do it while the host initializes
	// instead of before the first answer.
	go func() {
		if loadAfter != nil {
			<-loadAfter
		}
		if err := tokens.Load(); err != nil {
			log.Error("cannot load the token encoding; token counts are estimated", "err", err)
		}
	}()
	opts := []memory.Option{memory.WithLogger(log)}
	if cfg.LLM.Configured() {
		llm, err := openai.New(openai.Config{
			BaseURL: cfg.LLM.BaseURL,
			APIKey:  cfg.LLM.APIKey,
			Model:   cfg.LLM.Model,
			Timeout: cfg.LLM.Timeout,
			Logger:  log,
		})
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("set up llm endpoint: %w", err), store.Close())
		}
		opts = append(opts, memory.WithLLM(llm))
	}
	if cfg.Embedding.Configured() {
		emb, err := openai.NewEmbedder(openai.EmbedConfig{
			Config: openai.Config{
				BaseURL: cmp.Or(cfg.Embedding.BaseURL, cfg.LLM.BaseURL),
				APIKey:  cmp.Or(cfg.Embedding.APIKey, cfg.LLM.APIKey),
				Model:   cfg.Embedding.Model,
				Timeout: cfg.LLM.Timeout,
				Logger:  log,
			},
			Dimensions: cfg.Embedding.Dimensions,
		})
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("set up embeddings endpoint: %w", err), store.Close())
		}
		opts = append(opts, memory.WithEmbedder(emb, store))
	}
	svc, err := memory.NewService(cfg.Memory, store, tokens, opts...)
	if err != nil {
		return nil, nil, errors.Join(err, store.Close())
	}
	return svc, store.Close, nil
}

// newMCPServer is the MCP server over svc, told what the configuration
// means for the host's model.
func newMCPServer(svc *memory.Service, cfg *Config) *server.MCPServer {
	return tools.NewServer(svc, version(),
		tools.WithDefaultUser(cfg.Memory.UserID),
		tools.WithLLMConfigured(cfg.LLM.Configured()),
	)
}

// llmState describes the updater's model for the start-up log line; it
// never includes the API key.
func llmState(cfg *Config) string {
	if !cfg.LLM.Configured() {
		return "not configured (turns are stored and searchable; extraction waits for an endpoint)"
	}
	base := cfg.LLM.BaseURL
	if base == "" {
		base = openai.DefaultBaseURL
	}
	if u, err := url.Parse(base); err == nil {
		u.User = nil // never log credentials embedded in the URL
		base = u.Redacted()
	}
	return cfg.LLM.Model + " at " + base
}

// version is the module version stamped by the go command ("go install
// ...@v1.2.3"), else "dev".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
