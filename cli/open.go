package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"os"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// dataDirMissing reports whether the configured data directory does not
// exist. Then nothing is stored, and a command that only reads or deletes
// says so without opening the store, which would create the directory.
func dataDirMissing(cfg *Config) bool {
	if cfg.Storage != "" {
		return false
	}
	_, err := os.Stat(cfg.DataDir)
	return errors.Is(err, fs.ErrNotExist)
}

// noMemoryIn is what a command says when the data directory does not
// exist.
func noMemoryIn(dir string) string {
	return fmt.Sprintf("no memory stored in %s (the directory does not exist; the server creates it when it first stores something)", dir)
}

// openStore opens the configured storage, the same way for the server and
// every command: the PostgreSQL database of the storage setting when it is
// set, else the data directory through the file store, with its locks.
func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (memory.Store, error) {
	if cfg.Storage != "" {
		return openPostgres(ctx, cfg, log)
	}
	s, err := files.Open(cfg.DataDir, files.WithLogger(log), files.WithVersions(cfg.MemoryVersions))
	if err != nil {
		return nil, fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	return s, nil
}

// storageName names where memory is kept, for messages: the data
// directory, or the database URL with its password masked.
func storageName(cfg *Config) string {
	if cfg.Storage != "" {
		return postgres.MaskURL(cfg.Storage)
	}
	return cfg.DataDir
}

// storageOpenTimeout bounds connecting to the database and migrating it at
// start.
const storageOpenTimeout = 30 * time.Second

// openPostgres opens the database of the storage setting. Its errors name
// the setting and where it came from, say what to do, and show the URL
// with its password masked (postgres.Open never includes it).
func openPostgres(ctx context.Context, cfg *Config, log *slog.Logger) (memory.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, storageOpenTimeout)
	defer cancel()
	s, err := postgres.Open(ctx, cfg.Storage, postgres.WithLogger(log), postgres.WithVersions(cfg.MemoryVersions))
	if err == nil {
		return s, nil
	}
	from := cmp.Or(cfg.origin["storage"], "the configuration")
	return nil, fmt.Errorf("setting storage from %s: %w%s", from, err, storageHint(err))
}

// storageHint says what to check for a database that cannot be opened.
func storageHint(err error) string {
	switch {
	case errors.Is(err, postgres.ErrSchemaTooNew):
		return " (upgrade mnemo, or point storage at another database)"
	case postgres.AuthFailed(err):
		return " (check the user name and password in the storage URL)"
	case postgres.DatabaseMissing(err):
		return " (create the database first: createdb, or CREATE DATABASE)"
	case errors.Is(err, postgres.ErrUnavailable):
		return " (check that PostgreSQL is running and that the host and port in the storage URL are right)"
	}
	return ""
}

// Whether openService attaches the configured LLM and embeddings
// endpoints.
const (
	withModels    = true
	withoutModels = false
)

// openService is the memory service over store. withModels attaches the
// configured LLM and embeddings endpoints (serve, demo, search);
// withoutModels is for commands that only read or delete. The token
// encoding loads in the background once loadAfter is closed (at once when
// it is nil), so that a command that counts no tokens never waits for it.
// The caller closes the service, then the store.
func openService(cfg *Config, store memory.Store, log *slog.Logger, models bool, loadAfter <-chan struct{}, extra ...engine.Option) (*engine.Service, error) {
	tokens, err := tiktoken.NewLazy(cfg.TokenEncoding)
	if err != nil {
		return nil, fmt.Errorf("load token encoding %s: %w", cfg.TokenEncoding, err)
	}
	opts := []engine.Option{engine.WithLogger(log)}
	if models && cfg.LLM.Configured() {
		llm, err := openai.New(openai.Config{
			BaseURL: cfg.LLM.BaseURL,
			APIKey:  cfg.LLM.APIKey,
			Model:   cfg.LLM.Model,
			Timeout: cfg.LLM.Timeout,
			Logger:  log,
		})
		if err != nil {
			return nil, fmt.Errorf("set up llm endpoint: %w", err)
		}
		opts = append(opts, engine.WithLLM(llm))
	}
	if models && cfg.Embedding.Configured() {
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
			return nil, fmt.Errorf("set up embeddings endpoint: %w", err)
		}
		opts = append(opts, engine.WithEmbedder(emb))
	}
	svc, err := engine.NewService(cfg.Memory, store, tokens, append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	if models {
		// Loading the BPE ranks takes ~100 ms: do it once loadAfter is
		// closed (serve: the initialize answer is written), not before.
		go func() {
			if loadAfter != nil {
				<-loadAfter
			}
			if err := tokens.Load(); err != nil {
				log.Error("cannot load the token encoding; token counts are estimated", "err", err)
			}
			engine.Prepare()
		}()
	}
	return svc, nil
}
