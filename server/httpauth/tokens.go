package httpauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Static bearer tokens.
//
// A token is "mnemo_" followed by 32 random bytes in unpadded base64url:
// the prefix lets secret scanners and people recognise one. The tokens
// file keeps, per token, its id, user, optional agent, creation time and
// the SHA-256 of the token, never the token itself. A plain hash is enough
// because a token has 256 bits of entropy: nobody can guess one from its
// hash, so the deliberate slowness of a password hash (bcrypt, argon2)
// would buy nothing and would cost every request.

// TokenPrefix starts every static token.
const TokenPrefix = "mnemo_"

// TokensFileName is the tokens file's name in the data directory.
const TokensFileName = "tokens.json"

// maxTokensFile bounds the tokens file read, so that a damaged file cannot
// make the server read without end.
const maxTokensFile = 8 << 20

// ErrNoToken is returned by Revoke for an id the file does not hold.
var ErrNoToken = errors.New("no such token")

// Token describes one static token, without its secret.
type Token struct {
	// ID names the token for list and revoke: "tok_" and 12 hex digits.
	ID      string    `json:"id"`
	User    string    `json:"user"`
	Agent   string    `json:"agent,omitempty"`
	Created time.Time `json:"created"`
	// Hash is "sha256:" and the hex SHA-256 of the token.
	Hash string `json:"hash"`
}

// tokensDoc is the tokens file.
type tokensDoc struct {
	Version int     `json:"version"`
	Tokens  []Token `json:"tokens"`
}

// TokenFile is the tokens file at one path, for the token commands. Its
// methods are safe for concurrent use within a process; two processes
// changing the file at once may lose one change (each replace is atomic,
// so the file is never torn).
type TokenFile struct {
	path string
	// Now and Rand are the clock and the randomness; tests replace them.
	Now  func() time.Time
	Rand io.Reader
	mu   sync.Mutex
}

// NewTokenFile returns the tokens file at path; nothing is read or created
// until a method needs it.
func NewTokenFile(path string) *TokenFile {
	return &TokenFile{path: path, Now: time.Now, Rand: rand.Reader}
}

// Path returns the file's path.
func (f *TokenFile) Path() string { return f.path }

// Add makes a new token for user (and agent, when not empty), stores its
// hash and returns the token, which is shown once and never again.
func (f *TokenFile) Add(user, agent string) (secret string, tok Token, err error) {
	secret, tok, err = MakeToken(f.Rand, f.Now(), user, agent)
	if err != nil {
		return "", Token{}, err
	}
	return secret, tok, f.AddToken(context.Background(), tok)
}

// MakeToken draws a new token for user (and agent, when not empty) from
// rnd and returns it with its record, stamped now; nothing is stored.
func MakeToken(rnd io.Reader, now time.Time, user, agent string) (secret string, tok Token, err error) {
	if err := memory.ValidateID("user", user); err != nil {
		return "", Token{}, err
	}
	if agent != "" {
		if err := memory.ValidateID("agent", agent); err != nil {
			return "", Token{}, err
		}
	}
	raw := make([]byte, 32+6)
	if _, err := io.ReadFull(rnd, raw); err != nil {
		return "", Token{}, fmt.Errorf("make token: %w", err)
	}
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:32])
	tok = Token{
		ID:      "tok_" + hex.EncodeToString(raw[32:]),
		User:    user,
		Agent:   agent,
		Created: now.UTC().Truncate(time.Second),
		Hash:    hashToken(secret),
	}
	return secret, tok, nil
}

// AddToken implements TokenStore: it appends t to the file.
func (f *TokenFile) AddToken(_ context.Context, t Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := f.read()
	if err != nil {
		return err
	}
	doc.Tokens = append(doc.Tokens, t)
	return f.write(doc)
}

// Tokens implements TokenStore.
func (f *TokenFile) Tokens(context.Context) ([]Token, error) { return f.List() }

// RevokeToken implements TokenStore: the token leaves the file.
func (f *TokenFile) RevokeToken(_ context.Context, id string) (Token, error) { return f.Revoke(id) }

// List returns the tokens in the order they were made; none when the file
// does not exist.
func (f *TokenFile) List() ([]Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := f.read()
	return doc.Tokens, err
}

// Revoke removes the token with id and returns it; it wraps ErrNoToken
// when there is none. A running server refuses the token from its next
// request on.
func (f *TokenFile) Revoke(id string) (Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := f.read()
	if err != nil {
		return Token{}, err
	}
	for i, t := range doc.Tokens {
		if t.ID == id {
			doc.Tokens = append(doc.Tokens[:i], doc.Tokens[i+1:]...)
			return t, f.write(doc)
		}
	}
	return Token{}, fmt.Errorf("revoke %s: %w", id, ErrNoToken)
}

// read loads the file; a missing file is an empty one.
func (f *TokenFile) read() (tokensDoc, error) {
	data, _, err := readTokensFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return tokensDoc{Version: 1}, nil
	}
	if err != nil {
		return tokensDoc{}, err
	}
	doc, err := parseTokens(data)
	if err != nil {
		return tokensDoc{}, fmt.Errorf("tokens file %s: %w", f.path, err)
	}
	return doc, nil
}

// write replaces the file atomically: a temporary file in the same
// directory, written, synced, renamed over the old one, then the directory
// synced, so that a crash leaves the old file or the new one.
func (f *TokenFile) write(doc tokensDoc) error {
	doc.Version = 1
	if doc.Tokens == nil {
		doc.Tokens = []Token{}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode tokens: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	if fi, err := os.Lstat(f.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("write tokens %s: not a regular file (a symlink?); refusing to replace it", f.path)
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*.tmp")
	if err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write tokens: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write tokens: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write tokens: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write tokens: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write tokens: sync directory: %w", err)
	}
	return nil
}

// readTokensFile reads the tokens file, refusing a symlink, anything but a
// regular file, and a file others may write (they could add tokens). It
// returns the file's info, taken from the file it read.
func readTokensFile(path string) ([]byte, os.FileInfo, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read tokens: %w", err)
	}
	if err := checkTokensFileInfo(path, lfi); err != nil {
		return nil, nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read tokens: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read tokens: %w", err)
	}
	if !os.SameFile(lfi, fi) {
		// Swapped for something else between Lstat and Open.
		return nil, nil, fmt.Errorf("read tokens %s: the file changed while being opened; try again", path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxTokensFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read tokens: %w", err)
	}
	if len(data) > maxTokensFile {
		return nil, nil, fmt.Errorf("read tokens %s: larger than %d bytes", path, maxTokensFile)
	}
	return data, fi, nil
}

func checkTokensFileInfo(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("read tokens %s: is a symbolic link; the tokens file must be a regular file", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("read tokens %s: not a regular file", path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("read tokens %s: writable by other users (mode %v); run chmod 600 on it", path, fi.Mode().Perm())
	}
	return nil
}

// parseTokens decodes and checks the tokens file: every entry must have a
// well-formed id (unique), a valid user and agent, and a SHA-256 hash. A
// file with any bad entry is refused whole, so that a damaged file fails
// closed rather than half-working.
func parseTokens(data []byte) (tokensDoc, error) {
	var doc tokensDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return tokensDoc{}, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return tokensDoc{}, errors.New("decode: data after the JSON object")
	}
	if doc.Version != 1 {
		return tokensDoc{}, fmt.Errorf("version %d; this mnemo reads version 1", doc.Version)
	}
	seen := make(map[string]bool, len(doc.Tokens))
	for i, t := range doc.Tokens {
		if !strings.HasPrefix(t.ID, "tok_") || memory.ValidateID("id", t.ID) != nil {
			return tokensDoc{}, fmt.Errorf("token %d: id %q is not tok_ and hex digits", i, t.ID)
		}
		if seen[t.ID] {
			return tokensDoc{}, fmt.Errorf("token %s: listed twice", t.ID)
		}
		seen[t.ID] = true
		if err := memory.ValidateID("user", t.User); err != nil {
			return tokensDoc{}, fmt.Errorf("token %s: %w", t.ID, err)
		}
		if t.Agent != "" {
			if err := memory.ValidateID("agent", t.Agent); err != nil {
				return tokensDoc{}, fmt.Errorf("token %s: %w", t.ID, err)
			}
		}
		h, ok := strings.CutPrefix(t.Hash, "sha256:")
		if b, err := hex.DecodeString(h); !ok || err != nil || len(b) != sha256.Size {
			return tokensDoc{}, fmt.Errorf("token %s: hash is not sha256: and 64 hex digits", t.ID)
		}
	}
	return doc, nil
}

// hashToken is the stored form of a token.
func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TokenVerifier checks static tokens against the tokens file. Before each
// check it looks at the file (one lstat) and reads it again when it was
// replaced or changed, so a token added or revoked by `mnemo token`
// counts from the next request, with no restart. A tokens file that cannot
// be read or is damaged refuses every static token (and is logged by the
// caller through the error) until it is fixed.
type TokenVerifier struct {
	path string

	mu     sync.Mutex
	stamp  os.FileInfo // of the file last read; nil when none
	tokens []Token
	err    error // why the last read failed
}

var _ Verifier = (*TokenVerifier)(nil)

// NewTokenVerifier returns a verifier over the tokens file at path. The
// file may not exist yet; then every static token is refused.
func NewTokenVerifier(path string) *TokenVerifier {
	return &TokenVerifier{path: path}
}

// Verify implements Verifier for tokens that start with TokenPrefix. It
// compares the token's hash with every stored hash in constant time.
func (v *TokenVerifier) Verify(_ context.Context, token string) (Identity, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return Identity{}, ErrUnrecognized
	}
	tokens, err := v.current()
	if err != nil {
		return Identity{}, unavailable("static tokens are unavailable", err)
	}
	want := []byte(hashToken(token))
	found := -1
	for i := range tokens {
		if subtle.ConstantTimeCompare([]byte(tokens[i].Hash), want) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Identity{}, invalidToken("unknown or revoked token", nil)
	}
	t := tokens[found]
	return Identity{User: t.User, Agent: t.Agent, Method: MethodToken, Credential: t.ID}, nil
}

// current returns the tokens of the file as it is now, reading it again
// when its identity, size or modification time changed.
func (v *TokenVerifier) current() ([]Token, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fi, err := os.Lstat(v.path)
	if errors.Is(err, fs.ErrNotExist) {
		v.stamp, v.tokens, v.err = nil, nil, nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	if v.stamp != nil && v.err == nil && os.SameFile(v.stamp, fi) && fi.Size() == v.stamp.Size() && fi.ModTime().Equal(v.stamp.ModTime()) {
		return v.tokens, nil
	}
	data, rfi, err := readTokensFile(v.path)
	if err == nil {
		var doc tokensDoc
		if doc, err = parseTokens(data); err == nil {
			v.stamp, v.tokens, v.err = rfi, doc.Tokens, nil
			return v.tokens, nil
		}
		err = fmt.Errorf("tokens file %s: %w", v.path, err)
	}
	v.stamp, v.tokens, v.err = nil, nil, err
	return nil, err
}
