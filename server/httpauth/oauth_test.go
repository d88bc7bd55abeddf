package httpauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testResource is the resource URL the tests' server answers for.
const testResource = "http://127.0.0.1:8787/mcp"

// fakeIssuer is an OAuth authorization server: metadata and a JWKS served
// by httptest, keys generated in the test.
type fakeIssuer struct {
	srv   *httptest.Server
	url   string
	mu    sync.Mutex
	keys  []jose.JSONWebKey // the public keys served
	jwks  atomic.Int32      // JWKS fetches
	metas atomic.Int32      // metadata fetches
	// openID serves only the OpenID Connect discovery document.
	openID bool
}

// signingKey is a private key with its key id and algorithm.
type signingKey struct {
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

func newFakeIssuer(t testing.TB, openID bool) *fakeIssuer {
	t.Helper()
	iss := &fakeIssuer{openID: openID}
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, _ *http.Request) {
		iss.metas.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/jwks", "token_endpoint": iss.url + "/token"})
	}
	if openID {
		mux.HandleFunc("/.well-known/openid-configuration", meta)
	} else {
		mux.HandleFunc("/.well-known/oauth-authorization-server", meta)
	}
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		iss.jwks.Add(1)
		iss.mu.Lock()
		defer iss.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.keys})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	iss.url = iss.srv.URL
	return iss
}

// newKey makes a key of alg and, when publish, serves its public half.
func (iss *fakeIssuer) newKey(t testing.TB, kid string, alg jose.SignatureAlgorithm, publish bool) signingKey {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case jose.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	if publish {
		iss.mu.Lock()
		iss.keys = append(iss.keys, jose.JSONWebKey{Key: key.Public(), KeyID: kid, Algorithm: string(alg), Use: "sig"})
		iss.mu.Unlock()
	}
	return signingKey{kid: kid, alg: alg, key: key}
}

// sign returns a JWT of claims signed with k.
func sign(t testing.TB, k signingKey, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if k.kid != "" {
		opts = opts.WithHeader("kid", k.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testNow is the verifiers' clock.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// claimsFor returns valid claims for iss, with changes applied (a nil
// value deletes the claim).
func claimsFor(iss string, changes map[string]any) map[string]any {
	c := map[string]any{
		"iss":   iss,
		"sub":   "alice",
		"aud":   testResource,
		"exp":   testNow.Add(time.Hour).Unix(),
		"iat":   testNow.Add(-time.Minute).Unix(),
		"scope": "openid mnemo:memory",
		"jti":   "j1",
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func newTestOAuth(t testing.TB, iss *fakeIssuer, change func(*OAuthConfig)) *OAuthVerifier {
	t.Helper()
	cfg := OAuthConfig{
		Issuer:         iss.url,
		Resource:       testResource,
		RequiredScopes: []string{"mnemo:memory"},
		AgentClaim:     "mnemo_agent",
		Now:            func() time.Time { return testNow },
		HTTPClient:     iss.srv.Client(),
	}
	if change != nil {
		change(&cfg)
	}
	v, err := NewOAuthVerifier(cfg)
	if err != nil {
		t.Fatalf("NewOAuthVerifier() error = %v", err)
	}
	return v
}

// unsigned returns a JWT with header alg none and no signature.
func unsigned(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
}

// hmacWithPublicKey returns a JWT signed HS256 with the RSA public key's
// bytes as the secret: the algorithm confusion attack.
func hmacWithPublicKey(t testing.TB, k signingKey, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der}, (&jose.SignerOptions{}).WithHeader("kid", k.kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestOAuthVerify(t *testing.T) {
	iss := newFakeIssuer(t, false)
	rsaKey := iss.newKey(t, "rsa1", jose.RS256, true)
	ecKey := iss.newKey(t, "ec1", jose.ES256, true)
	stranger := iss.newKey(t, "rsa1", jose.RS256, false) // same kid, unpublished key
	v := newTestOAuth(t, iss, nil)

	tests := []struct {
		name      string
		token     string
		wantUser  string
		wantAgent string
		wantCode  string // "" for success
		wantDesc  string
	}{
		{"RS256", sign(t, rsaKey, claimsFor(iss.url, nil)), "alice", "", "", ""},
		{"ES256", sign(t, ecKey, claimsFor(iss.url, nil)), "alice", "", "", ""},
		{"audience list", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"aud": []string{"other", testResource}})), "alice", "", "", ""},
		{"scp array", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"scope": nil, "scp": []string{"mnemo:memory"}})), "alice", "", "", ""},
		{"agent claim", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"mnemo_agent": "coder"})), "alice", "coder", "", ""},
		{"within leeway", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"exp": testNow.Add(-10 * time.Second).Unix()})), "alice", "", "", ""},
		{"expired", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"exp": testNow.Add(-time.Hour).Unix()})), "", "", "invalid_token", "expired"},
		{"no exp", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"exp": nil})), "", "", "invalid_token", "no expiry"},
		{"not yet valid", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"nbf": testNow.Add(time.Hour).Unix()})), "", "", "invalid_token", "not valid yet"},
		{"wrong issuer", sign(t, rsaKey, claimsFor("https://evil.example", nil)), "", "", "invalid_token", "another issuer"},
		{"wrong audience", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"aud": "https://other.example/mcp"})), "", "", "invalid_token", "not issued for this resource"},
		{"no audience", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"aud": nil})), "", "", "invalid_token", "not issued for this resource"},
		{"missing scope", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"scope": "openid"})), "", "", "insufficient_scope", "mnemo:memory"},
		{"unusable user", sign(t, rsaKey, claimsFor(iss.url, map[string]any{"sub": "auth0|123"})), "", "", "invalid_token", "claim sub"},
		{"wrong key", sign(t, stranger, claimsFor(iss.url, nil)), "", "", "invalid_token", "signature"},
		{"alg none", unsigned(claimsFor(iss.url, nil)), "", "", "invalid_token", "accepted algorithm"},
		{"HS256 with the public key", hmacWithPublicKey(t, rsaKey, claimsFor(iss.url, nil)), "", "", "invalid_token", "accepted algorithm"},
		{"tampered payload", tamper(sign(t, rsaKey, claimsFor(iss.url, nil))), "", "", "invalid_token", ""},
		{"garbage", "a.b.c", "", "", "invalid_token", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := v.Verify(t.Context(), tt.token)
			if tt.wantCode == "" {
				if err != nil || id.User != tt.wantUser || id.Agent != tt.wantAgent || id.Method != MethodOAuth {
					t.Errorf("Verify() = %+v, %v; want user %q agent %q by oauth", id, err, tt.wantUser, tt.wantAgent)
				}
				return
			}
			var e *Error
			if !isCode(err, tt.wantCode) || !strings.Contains(err.Error(), tt.wantDesc) {
				t.Errorf("Verify() error = %v, want %s mentioning %q", err, tt.wantCode, tt.wantDesc)
			} else if errors.As(err, &e); tt.wantCode == "insufficient_scope" && e.Status != http.StatusForbidden {
				t.Errorf("insufficient_scope status = %d, want 403", e.Status)
			}
		})
	}
	if _, err := v.Verify(t.Context(), "mnemo_abc"); err != ErrUnrecognized {
		t.Errorf("Verify(static token) error = %v, want ErrUnrecognized", err)
	}
}

// tamper changes the payload of a JWT, keeping its signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), `"alice"`, `"mallory"`, 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// TestOAuthKeyRotation checks the key cache: keys are fetched once, an
// unknown kid fetches them again (a rotation), and unknown kids do not
// make a fetch per request.
func TestOAuthKeyRotation(t *testing.T) {
	iss := newFakeIssuer(t, true) // discovered through OpenID metadata
	k1 := iss.newKey(t, "k1", jose.RS256, true)
	now := testNow
	v := newTestOAuth(t, iss, func(c *OAuthConfig) { c.Now = func() time.Time { return now } })
	ctx := t.Context()

	for range 3 {
		if _, err := v.Verify(ctx, sign(t, k1, claimsFor(iss.url, nil))); err != nil {
			t.Fatalf("Verify(k1) error = %v", err)
		}
	}
	if n := iss.jwks.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times for three tokens, want 1", n)
	}
	if n := iss.metas.Load(); n != 1 {
		t.Errorf("metadata fetched %d times, want 1", n)
	}

	// The issuer rotates to k2 after the refresh interval has passed.
	now = now.Add(2 * time.Minute)
	k2 := iss.newKey(t, "k2", jose.RS256, true)
	if _, err := v.Verify(ctx, sign(t, k2, claimsFor(iss.url, nil))); err != nil {
		t.Fatalf("Verify(k2 after rotation) error = %v", err)
	}
	if n := iss.jwks.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after rotation, want 2", n)
	}

	// Tokens with kids nobody publishes do not fetch again within the
	// interval.
	bogus := iss.newKey(t, "bogus", jose.RS256, false)
	for range 5 {
		if _, err := v.Verify(ctx, sign(t, bogus, claimsFor(iss.url, nil))); !isCode(err, "invalid_token") {
			t.Errorf("Verify(unknown kid) error = %v, want invalid_token", err)
		}
	}
	if n := iss.jwks.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after unknown kids, want still 2 (rate limited)", n)
	}
}

func TestOAuthConfigRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  OAuthConfig
		want string
	}{
		{"no issuer", OAuthConfig{Resource: testResource}, "issuer"},
		{"no resource", OAuthConfig{Issuer: "https://as.example"}, "resource"},
		{"http issuer", OAuthConfig{Issuer: "http://as.example", Resource: testResource}, "https"},
		{"http jwks", OAuthConfig{Issuer: "https://as.example", JWKSURL: "http://as.example/jwks", Resource: testResource}, "https"},
		{"HS256", OAuthConfig{Issuer: "https://as.example", Resource: testResource, Algorithms: []string{"HS256"}}, "HS256"},
		{"none", OAuthConfig{Issuer: "https://as.example", Resource: testResource, Algorithms: []string{"none"}}, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewOAuthVerifier(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOAuthVerifier() error = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestMetadataURLs(t *testing.T) {
	got := metadataURLs("https://as.example/tenant1/")
	want := []string{
		"https://as.example/.well-known/oauth-authorization-server/tenant1",
		"https://as.example/.well-known/openid-configuration/tenant1",
		"https://as.example/tenant1/.well-known/openid-configuration",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("metadataURLs() = %v, want %v", got, want)
	}
}
