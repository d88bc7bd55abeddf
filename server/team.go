package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
)

// What instances of serve --http share, so that any of them behind a
// load balancer answers any request: the static tokens and the viewer's
// key. With PostgreSQL storage both live in the database (mnemo_tokens,
// mnemo_keys); with the file store, in the data directory (tokens.json,
// ui.key), which only instances on one machine can share.

// UIKeyFileName is the viewer's key file in the data directory.
const UIKeyFileName = "ui.key"

// uiKeySize is the length of the viewer's key in bytes.
const uiKeySize = 32

// pgTokens is the PostgreSQL store's token table as an
// httpauth.TokenStore.
type pgTokens struct{ s *postgres.Store }

var _ httpauth.TokenStore = pgTokens{}

func (p pgTokens) AddToken(ctx context.Context, t httpauth.Token) error {
	return p.s.AddToken(ctx, postgres.TokenRecord{ID: t.ID, Hash: t.Hash, User: t.User, Agent: t.Agent, Created: t.Created})
}

func (p pgTokens) Tokens(ctx context.Context) ([]httpauth.Token, error) {
	recs, err := p.s.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]httpauth.Token, len(recs))
	for i, r := range recs {
		out[i] = fromRecord(r)
	}
	return out, nil
}

func (p pgTokens) RevokeToken(ctx context.Context, id string) (httpauth.Token, error) {
	r, err := p.s.RevokeToken(ctx, id)
	if errors.Is(err, postgres.ErrNoToken) {
		return httpauth.Token{}, fmt.Errorf("revoke %s: %w", id, httpauth.ErrNoToken)
	}
	return fromRecord(r), err
}

func fromRecord(r postgres.TokenRecord) httpauth.Token {
	return httpauth.Token{ID: r.ID, Hash: r.Hash, User: r.User, Agent: r.Agent, Created: r.Created}
}

// TokenStore is where the tokens of store live, and its name for
// messages: the database of a PostgreSQL store, else the tokens file of
// dataDir (store may be nil).
func TokenStore(dataDir string, store memory.Store) (httpauth.TokenStore, string) {
	if ps, ok := store.(*postgres.Store); ok {
		return pgTokens{ps}, "the mnemo_tokens table of " + ps.String()
	}
	path := filepath.Join(dataDir, httpauth.TokensFileName)
	return httpauth.NewTokenFile(path), path
}

// tokenVerifier checks the static tokens of store for serve --http. The
// tokens file is looked at before each check; the database's tokens are
// cached and loaded again when a change is announced (LISTEN/NOTIFY),
// after three seconds at most otherwise, and at once for an unknown
// token after a second. The returned func runs the watch until ctx ends.
func tokenVerifier(dataDir string, store memory.Store) (httpauth.Verifier, string, func(ctx context.Context)) {
	ts, where := TokenStore(dataDir, store)
	ps, ok := store.(*postgres.Store)
	if !ok {
		return httpauth.NewTokenVerifier(where), where, func(context.Context) {}
	}
	v := httpauth.NewStoreVerifier(ts, httpauth.StoreVerifierOptions{})
	return v, where, func(ctx context.Context) { ps.WatchTokens(ctx, v.Changed) }
}

// uiKey is the viewer's key, the same for every instance on the storage:
// a row of mnemo_keys with PostgreSQL, else the ui.key file of the data
// directory (0600), made by the first instance that needs it.
func uiKey(ctx context.Context, dataDir string, store memory.Store) ([]byte, error) {
	if ps, ok := store.(*postgres.Store); ok {
		return ps.Key(ctx, "ui", uiKeySize)
	}
	return fileKey(filepath.Join(dataDir, UIKeyFileName), uiKeySize)
}

// fileKey reads the key file at path, or makes it: written whole to a
// temporary file, then linked into place, so that of two processes
// making it at once one wins and both read its key.
func fileKey(path string, size int) ([]byte, error) {
	key, err := readKeyFile(path, size)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make key %s: %w", path, err)
	}
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("make key %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".key-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("make key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(fresh)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("make key %s: %w", path, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("make key %s: %w", path, err)
	}
	return readKeyFile(path, size)
}

// readKeyFile reads a key file, refusing one others may read or write.
func readKeyFile(path string, size int) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: not a regular file readable by its owner only (mode %v); remove it and it is made again", path, fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return nil, fmt.Errorf("read key %s: the file changed while being opened; try again", path)
	}
	key, err := io.ReadAll(io.LimitReader(f, int64(size)+1))
	if err != nil {
		return nil, fmt.Errorf("read key %s: %w", path, err)
	}
	if len(key) != size || bytes.Count(key, []byte{0}) == size {
		return nil, fmt.Errorf("key file %s: damaged (%d bytes, want %d); remove it and it is made again", path, len(key), size)
	}
	return key, nil
}
