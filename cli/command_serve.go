package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/redact"
	"github.com/mnemo-mcp/mnemo/server"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/server/ui"
	"github.com/mnemo-mcp/mnemo/tools"
)

// runServe is "mnemo serve", what MCP hosts run: the stdio transport, or
// with --http the Streamable HTTP one (package server serves both).
func runServe(ctx context.Context, c *call) int {
	if c.args.has("http") || c.args.flag("insecure-no-auth") || len(c.args.positional) > 0 {
		return runServeHTTP(ctx, c)
	}
	if err := server.Stdio(ctx, serverConfig(c), c.stdin, c.stdout, c.log); err != nil {
		c.log.Error("mnemo serve failed", "err", err)
		return exitError
	}
	return exitOK
}

// runServeHTTP is "mnemo serve --http [ADDR]".
func runServeHTTP(ctx context.Context, c *call) int {
	addr := c.args.str("http")
	switch {
	case !c.args.has("http"):
		if len(c.args.positional) > 0 {
			return c.fail(exitUsage, "unexpected argument %q; an address is given only with --http", c.args.positional[0])
		}
		return c.fail(exitUsage, "--insecure-no-auth is only for --http")
	case addr != "" && len(c.args.positional) > 0:
		return c.fail(exitUsage, "unexpected argument %q: the address is already %s", c.args.positional[0], addr)
	case addr == "" && len(c.args.positional) > 0:
		addr = c.args.positional[0]
	case addr == "":
		addr = server.DefaultHTTPAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return c.fail(exitUsage, "--http %q: want HOST:PORT, like %s or 0.0.0.0:8787", addr, server.DefaultHTTPAddr)
	}
	insecure := c.args.flag("insecure-no-auth")
	if insecure && !server.LoopbackHost(host) {
		return c.fail(exitUsage, "--insecure-no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not %q: anyone who can reach it could read and change every user's memory; create a token with 'mnemo token add --user NAME' instead", addr)
	}
	hc := c.cfg.HTTP
	if (hc.TLSCertFile == "") != (hc.TLSKeyFile == "") {
		return c.fail(exitUsage, "TLS needs both tls_cert_file and tls_key_file; only one is set")
	}
	if !insecure && hc.OAuthIssuer == "" && c.cfg.Storage == "" {
		// The database's tokens are counted once it is open (server.HTTP).
		tokensPath := filepath.Join(c.cfg.DataDir, httpauth.TokensFileName)
		toks, err := httpauth.NewTokenFile(tokensPath).List()
		if err != nil {
			return c.fail(exitUsage, "%v", err)
		}
		if len(toks) == 0 {
			return c.fail(exitUsage, "%s", server.NoAuth(tokensPath))
		}
	}
	err = server.HTTP(ctx, serverConfig(c), server.HTTPOptions{Addr: addr, Insecure: insecure}, c.stderr, c.log)
	var refused server.Refusal
	if errors.As(err, &refused) {
		return c.fail(exitUsage, "%s", refused.Msg)
	}
	if err != nil {
		c.log.Error("mnemo serve --http failed", "err", err)
		return exitError
	}
	return exitOK
}

// serverConfig is what package server needs of the configuration: the
// settings it reads, and the one way to open the store, the service and
// the viewer's options.
func serverConfig(c *call) server.Config {
	cfg := c.cfg
	problem, fix := cfg.dataDirProblem()
	return server.Config{
		Memory:         cfg.Memory,
		HTTP:           cfg.HTTP,
		DataDir:        cfg.DataDir,
		ShutdownGrace:  cfg.ShutdownGrace,
		LLMConfigured:  cfg.LLM.Configured(),
		Version:        version(),
		Storage:        storageName(cfg),
		TokenEncoding:  cfg.TokenEncoding,
		LLM:            llmState(cfg),
		DataDirProblem: problem,
		DataDirFix:     fix,
		// A host runs many MCP servers side by side: once the default
		// scope is loaded, trade a little GC CPU for a smaller footprint
		// (GC percent 35: peak RSS at 5,000 stored exchanges 52.7 MB at
		// 100 → 49 MB; at 100,000, 252 → 232 MB, retrieval p50
		// unchanged). GOGC in the environment overrides this.
		LowGC: c.getenv("GOGC") == "",
		OpenStore: func(ctx context.Context, log *slog.Logger) (memory.Store, error) {
			return openStore(ctx, cfg, log)
		},
		OpenService: func(store memory.Store, log *slog.Logger, loadAfter <-chan struct{}) (*engine.Service, error) {
			return openService(cfg, store, log, withModels, loadAfter)
		},
		Viewer: func(svc *engine.Service, store memory.Store) ui.Options {
			return ui.Options{Models: uiModels(cfg), Export: uiExport(store), Import: uiImport(svc, cfg.Memory)}
		},
	}
}

// openTokenStore opens the token store of the configured storage for
// the token commands; close releases it.
func openTokenStore(ctx context.Context, cfg *Config, log *slog.Logger) (ts httpauth.TokenStore, where string, close func() error, err error) {
	if cfg.Storage == "" {
		ts, where = server.TokenStore(cfg.DataDir, nil)
		return ts, where, func() error { return nil }, nil
	}
	store, err := openPostgres(ctx, cfg, log)
	if err != nil {
		return nil, "", nil, err
	}
	ts, where = server.TokenStore(cfg.DataDir, store)
	return ts, where, store.Close, nil
}

// newMCPServer is the MCP server over svc, told what the configuration
// means for the host's model (mnemo demo's in-process client).
func newMCPServer(svc *engine.Service, cfg *Config, opts ...tools.Option) *mcpserver.MCPServer {
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
