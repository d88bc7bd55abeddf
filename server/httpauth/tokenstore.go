package httpauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"
)

// TokenStore keeps the records of static tokens (never the tokens): the
// tokens file of a data directory, or a table shared by every instance
// (package cli adapts the PostgreSQL store to it).
type TokenStore interface {
	// AddToken stores a new token's record; an error means it was not
	// stored.
	AddToken(ctx context.Context, t Token) error
	// Tokens returns the records of the tokens not revoked, oldest
	// first; an error means they could not be read, and no token may
	// be accepted on their account.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeToken makes the token with id unusable and returns its
	// record; it wraps ErrNoToken when no usable token has that id.
	RevokeToken(ctx context.Context, id string) (Token, error)
}

var _ TokenStore = (*TokenFile)(nil)

// IssueToken makes a new token for user (and agent, when not empty),
// stores its record in store and returns the token, to be shown once.
func IssueToken(ctx context.Context, store TokenStore, user, agent string) (string, Token, error) {
	secret, tok, err := MakeToken(rand.Reader, time.Now(), user, agent)
	if err != nil {
		return "", Token{}, err
	}
	if err := store.AddToken(ctx, tok); err != nil {
		return "", Token{}, err
	}
	return secret, tok, nil
}

// StoreVerifierOptions tune a StoreVerifier.
type StoreVerifierOptions struct {
	// MaxAge is how long a loaded list of tokens is trusted when no
	// change is announced (Changed); default 3 s. It bounds how late a
	// revocation takes effect should an announcement be lost.
	MaxAge time.Duration
	// MissAge is how old the list must be before a token it lacks makes
	// it load again (a token just added elsewhere); default 1 s. It
	// bounds the loads that unknown tokens can cause.
	MissAge time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// StoreVerifier checks static tokens against a TokenStore shared by
// several instances. It keeps the list of tokens in memory and loads it
// again when told that it changed (Changed, e.g. on a PostgreSQL NOTIFY),
// when it is older than MaxAge, and when a token is not on a list older
// than MissAge. When the list cannot be loaded, every static token is
// refused until it can: a revocation is never missed for an outage.
type StoreVerifier struct {
	store TokenStore
	opt   StoreVerifierOptions

	mu     sync.Mutex
	loaded time.Time // zero: load at the next check
	byHash map[string]Token
}

var _ Verifier = (*StoreVerifier)(nil)

// NewStoreVerifier returns a verifier over store.
func NewStoreVerifier(store TokenStore, opt StoreVerifierOptions) *StoreVerifier {
	if opt.MaxAge <= 0 {
		opt.MaxAge = 3 * time.Second
	}
	if opt.MissAge <= 0 {
		opt.MissAge = time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &StoreVerifier{store: store, opt: opt}
}

// Changed tells the verifier that the tokens may have changed: the next
// check loads them again.
func (v *StoreVerifier) Changed() {
	v.mu.Lock()
	v.loaded = time.Time{}
	v.mu.Unlock()
}

// Verify implements Verifier for tokens that start with TokenPrefix.
func (v *StoreVerifier) Verify(ctx context.Context, token string) (Identity, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return Identity{}, ErrUnrecognized
	}
	// The map is keyed by the SHA-256 of the token: how long a lookup
	// takes tells nothing about a token that hashes to a stored value.
	hash := hashToken(token)
	v.mu.Lock()
	defer v.mu.Unlock()
	age := v.opt.Now().Sub(v.loaded)
	if v.loaded.IsZero() || age >= v.opt.MaxAge {
		if err := v.load(ctx); err != nil {
			return Identity{}, unavailable("static tokens are unavailable", err)
		}
	}
	t, ok := v.byHash[hash]
	if !ok && v.opt.Now().Sub(v.loaded) >= v.opt.MissAge {
		if err := v.load(ctx); err != nil {
			return Identity{}, unavailable("static tokens are unavailable", err)
		}
		t, ok = v.byHash[hash]
	}
	if !ok {
		return Identity{}, invalidToken("unknown or revoked token", nil)
	}
	return Identity{User: t.User, Agent: t.Agent, Method: MethodToken, Credential: t.ID}, nil
}

// load reads the tokens; on failure nothing is kept, so every token is
// refused until a load succeeds.
func (v *StoreVerifier) load(ctx context.Context) error {
	toks, err := v.store.Tokens(ctx)
	if err != nil {
		v.loaded, v.byHash = time.Time{}, nil
		return fmt.Errorf("load tokens: %w", err)
	}
	m := make(map[string]Token, len(toks))
	for _, t := range toks {
		m[t.Hash] = t
	}
	v.loaded, v.byHash = v.opt.Now(), m
	return nil
}
