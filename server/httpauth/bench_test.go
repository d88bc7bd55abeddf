package httpauth

import (
	"net/http"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// BenchmarkTokenVerify is the cost of a static token per request: an
// lstat of the tokens file, a SHA-256 and the comparisons (100 tokens).
func BenchmarkTokenVerify(b *testing.B) {
	f := newTestTokenFile(b)
	var secret string
	for range 100 {
		s, _, err := f.Add("alice", "")
		if err != nil {
			b.Fatal(err)
		}
		secret = s
	}
	v := NewTokenVerifier(f.Path())
	for b.Loop() {
		if _, err := v.Verify(b.Context(), secret); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreVerify is the cost of a static token checked against a
// shared store's cached list (100 tokens): a SHA-256 and a map lookup;
// the store is read again only when it changes (not here).
func BenchmarkStoreVerify(b *testing.B) {
	store := &memTokens{}
	var secret string
	for range 100 {
		s, _, err := IssueToken(b.Context(), store, "alice", "")
		if err != nil {
			b.Fatal(err)
		}
		secret = s
	}
	v := NewStoreVerifier(store, StoreVerifierOptions{MaxAge: time.Hour})
	for b.Loop() {
		if _, err := v.Verify(b.Context(), secret); err != nil {
			b.Fatal(err)
		}
	}
	if store.loads != 1 {
		b.Errorf("the store was read %d times, want once", store.loads)
	}
}

// BenchmarkOAuthVerify is the cost of an RS256 access token with cached keys.
func BenchmarkOAuthVerify(b *testing.B) {
	iss := newFakeIssuer(b, false)
	k := iss.newKey(b, "k1", jose.RS256, true)
	v := newTestOAuth(b, iss, nil)
	tok := sign(b, k, claimsFor(iss.url, nil))
	for b.Loop() {
		if _, err := v.Verify(b.Context(), tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStack is one authenticated request through the whole stack
// (access log, Host/Origin, body limit, static token, rate limit).
func BenchmarkStack(b *testing.B) {
	s := newStack(b, nil, 1<<30)
	secret, _, err := s.tokens.Add("alice", "")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if w := s.do(b, request{auth: bearer(secret), body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`}); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
