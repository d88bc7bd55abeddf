package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// dataDirMissing reports whether the configured data directory does not
// exist. Then nothing is stored, and a command that only reads or deletes
// says so without opening the store, which would create the directory.
func dataDirMissing(cfg *Config) bool {
	_, err := os.Stat(cfg.DataDir)
	return errors.Is(err, fs.ErrNotExist)
}

// noMemoryIn is what a command says when the data directory does not
// exist.
func noMemoryIn(dir string) string {
	return fmt.Sprintf("no memory stored in %s (the directory does not exist; the server creates it when it first stores something)", dir)
}

// openStore opens the configured storage, the same way for the server and
// every command: the data directory through the file store, with its locks.
func openStore(cfg *Config, log *slog.Logger) (memory.Store, error) {
	s, err := files.Open(cfg.DataDir, files.WithLogger(log), files.WithVersions(cfg.MemoryVersions))
	if err != nil {
		return nil, fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	return s, nil
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
func openService(cfg *Config, store memory.Store, log *slog.Logger, models bool, loadAfter <-chan struct{}, extra ...memory.Option) (*memory.Service, error) {
	tokens, err := tiktoken.NewLazy(cfg.TokenEncoding)
	if err != nil {
		return nil, fmt.Errorf("load token encoding %s: %w", cfg.TokenEncoding, err)
	}
	opts := []memory.Option{memory.WithLogger(log)}
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
		opts = append(opts, memory.WithLLM(llm))
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
		opts = append(opts, memory.WithEmbedder(emb))
	}
	svc, err := memory.NewService(cfg.Memory, store, tokens, append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	if models {
		// Loading the BPE ranks takes ~100 ms: do it while the host
		// initializes instead of before the first answer.
		go func() {
			if loadAfter != nil {
				<-loadAfter
			}
			if err := tokens.Load(); err != nil {
				log.Error("cannot load the token encoding; token counts are estimated", "err", err)
			}
		}()
	}
	return svc, nil
}
