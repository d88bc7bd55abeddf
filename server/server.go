package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/server/ui"
)

// Config is what serving reads of mnemo's settings and what it needs of
// the program around it. The command line fills it from its own
// configuration (cli/command_serve.go); nothing here reads a file or the
// environment.
type Config struct {
	// Memory is the memory service's configuration: the default user and
	// the limits the stdio guard derives its longest line from.
	Memory memory.Config
	// HTTP is what serve --http reads.
	HTTP HTTPConfig
	// DataDir holds the file store, the tokens file and the viewer's key.
	DataDir string
	// ShutdownGrace bounds the time spent finishing work on exit.
	ShutdownGrace time.Duration
	// LLMConfigured reports whether the memory updater has a model.
	LLMConfigured bool
	// Version is mnemo's version, told to clients and logged.
	Version string
	// Storage, TokenEncoding and LLM describe the configuration in the
	// start-up log line; LLM never includes an API key.
	Storage       string
	TokenEncoding string
	LLM           string
	// DataDirProblem and DataDirFix are a warning about the data
	// directory to log at start-up; empty: none.
	DataDirProblem, DataDirFix string
	// LowGC lowers the GC percent to serveGCPercent once the default
	// scope is loaded (GOGC unset).
	LowGC bool

	// OpenStore opens the configured store; the server closes it.
	OpenStore func(ctx context.Context, log *slog.Logger) (memory.Store, error)
	// OpenService opens the memory service over store, with its models;
	// nothing costly is loaded before loadAfter is closed (at once when
	// nil).
	OpenService func(store memory.Store, log *slog.Logger, loadAfter <-chan struct{}) (*engine.Service, error)
	// Viewer is the viewer's options over svc and store that serving does
	// not set itself (models, export, import); serve --http sets the
	// prefix, authentication, keys and limits.
	Viewer func(svc *engine.Service, store memory.Store) ui.Options
}
