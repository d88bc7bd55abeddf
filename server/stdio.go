package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"golang.org/x/term"

	"github.com/mnemo-mcp/mnemo/tools"
)

// serveGCPercent is the GC percent serve runs with once the default
// scope is loaded, unless GOGC is set.
const serveGCPercent = 35

// Stdio answers MCP requests on stdin/stdout until stdin is closed or ctx
// is cancelled (SIGINT/SIGTERM); both are a clean shutdown. Only JSON-RPC
// messages are written to stdout; log goes to stderr.
func Stdio(ctx context.Context, cfg Config, stdin io.Reader, stdout io.Writer, log *slog.Logger) (err error) {
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
	store, err := cfg.OpenStore(ctx, slog.New(clientLog))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	svc, err := cfg.OpenService(store, slog.New(clientLog), answered)
	if err != nil {
		return err
	}

	mcpServer := tools.NewServer(svc, cfg.Version, tools.WithDefaultUser(cfg.Memory.UserID), tools.WithLLMConfigured(cfg.LLMConfigured),
		tools.WithClientLog(clientLog), tools.WithAfterFirstAnswer(markAnswered))
	log.Info("serving MCP on stdio",
		"version", cfg.Version, "storage", cfg.Storage, "user_id", cfg.Memory.UserID,
		"token_encoding", cfg.TokenEncoding, "llm", cfg.LLM)

	if cfg.DataDirProblem != "" {
		log.Warn(cfg.DataDirProblem, "fix", cfg.DataDirFix)
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
	stopStart := startService(ctx, svc, log, cfg.LowGC, answered)

	out := &lockedWriter{w: stdout}
	err = serveStdio(ctx, mcpServer, newStdioGuard(stdin, out, maxRequestLine(cfg.Memory)), out, log)
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

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}
