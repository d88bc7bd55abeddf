package httpauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mnemo-mcp/mnemo/memory"
)

// OAuth access tokens.
//
// The JOSE library is github.com/go-jose/go-jose/v4: it has no
// dependencies outside the standard library, is maintained (it is what
// coreos/go-oidc and much of the Kubernetes ecosystem verify tokens with),
// has the JWK Set type the issuer's keys come in, and its parser takes the
// list of accepted signature algorithms as a required argument, so "none"
// and HMAC algorithms are refused before any key is looked at (go-jose
// does not implement "none" at all). golang-jwt/jwt/v5 would need a
// second module for JWKS; lestrrat-go/jwx/v3 does everything but brings
// several dependencies for features mnemo does not use.

// DefaultAlgorithms are the signature algorithms accepted when
// OAuthConfig.Algorithms is empty: RSA and ECDSA with SHA-256 and their
// larger sizes, RSA-PSS and Ed25519. HMAC is never accepted: its key is a
// shared secret, and a resource server that has only public keys must not
// be tricked into using one as an HMAC key.
var DefaultAlgorithms = []string{"RS256", "ES256", "PS256", "RS384", "ES384", "PS384", "RS512", "ES512", "PS512", "EdDSA"}

// OAuthConfig configures an OAuthVerifier.
type OAuthConfig struct {
	// Issuer is the authorization server's issuer identifier, matched
	// exactly against the token's iss; required.
	Issuer string
	// Resource is this server's resource URL (e.g.
	// https://memory.example.com/mcp); a token must name it in aud
	// (RFC 8707); required.
	Resource string
	// JWKSURL is where the issuer's keys are. Empty: discovered from the
	// issuer's metadata, /.well-known/oauth-authorization-server then
	// /.well-known/openid-configuration (RFC 8414, OpenID Discovery).
	JWKSURL string
	// RequiredScopes must all be granted (scope or scp claim); a token
	// without one is answered 403 insufficient_scope.
	RequiredScopes []string
	// UserClaim is the claim holding the user id; default "sub". The value
	// must be a valid mnemo user id.
	UserClaim string
	// AgentClaim, when set, is a claim that confines a token to one agent.
	AgentClaim string
	// Algorithms accepted; default DefaultAlgorithms. HS* and none are
	// refused even if listed.
	Algorithms []string
	// Leeway for exp, nbf and iat; default 30 s.
	Leeway time.Duration
	// RefreshInterval bounds key fetches: a token signed with an unknown
	// key id fetches the keys again at most this often; default 1 min.
	RefreshInterval time.Duration
	// MaxKeyAge is how long fetched keys are used before being fetched
	// again; default 1 h. A failed refetch keeps the old keys.
	MaxKeyAge time.Duration
	// HTTPClient fetches metadata and keys; default one with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives key fetch failures; default slog.Default().
	Logger *slog.Logger
}

// OAuthVerifier checks OAuth access tokens that are JWTs signed by one
// issuer. Its keys are fetched on first use and cached.
type OAuthVerifier struct {
	cfg  OAuthConfig
	algs []jose.SignatureAlgorithm

	mu        sync.Mutex // held while fetching, so one fetch runs at a time
	keys      *jose.JSONWebKeySet
	fetched   time.Time // when keys were last fetched (or tried)
	jwksURL   string    // discovered or configured
	lastError error
}

var _ Verifier = (*OAuthVerifier)(nil)

// NewOAuthVerifier checks cfg and returns a verifier; it does no I/O.
// The issuer and the key URL must be https, except on a loopback host.
func NewOAuthVerifier(cfg OAuthConfig) (*OAuthVerifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: the issuer is not set")
	}
	if cfg.Resource == "" {
		return nil, errors.New("oauth: this server's resource URL is not set")
	}
	if err := checkFetchURL("issuer", cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.JWKSURL != "" {
		if err := checkFetchURL("jwks_uri", cfg.JWKSURL); err != nil {
			return nil, err
		}
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = "sub"
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = time.Minute
	}
	if cfg.MaxKeyAge == 0 {
		cfg.MaxKeyAge = time.Hour
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	v := &OAuthVerifier{cfg: cfg, jwksURL: cfg.JWKSURL}
	for _, a := range cfg.Algorithms {
		if a == "none" || strings.HasPrefix(strings.ToUpper(a), "HS") {
			return nil, fmt.Errorf("oauth: algorithm %s is not accepted: a resource server verifies with public keys only", a)
		}
		if !slices.Contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("oauth: unknown signature algorithm %q; use some of %s", a, strings.Join(DefaultAlgorithms, ", "))
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	return v, nil
}

// checkFetchURL refuses a URL the verifier would fetch keys from over
// plain HTTP from anywhere but this machine.
func checkFetchURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oauth: %s %q is not an absolute URL", what, raw)
	}
	if u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("oauth: %s %q must be an https URL", what, raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accessClaims are the claims read beyond the registered ones.
type accessClaims struct {
	Scope string `json:"scope"` // RFC 9068: space-separated
	Scp   any    `json:"scp"`   // some issuers: an array or a string
}

// Verify implements Verifier for tokens that look like a JWS in compact
// form (three dot-separated parts).
func (v *OAuthVerifier) Verify(ctx context.Context, token string) (Identity, error) {
	if strings.Count(token, ".") != 2 {
		return Identity{}, ErrUnrecognized
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return Identity{}, invalidToken("not a signed JWT with an accepted algorithm", err)
	}
	if len(tok.Headers) != 1 {
		return Identity{}, invalidToken("not a JWT with one signature", nil)
	}
	hdr := tok.Headers[0]
	keys, err := v.keysFor(ctx, hdr.KeyID)
	if err != nil {
		return Identity{}, unavailable("the issuer's keys are unavailable", err)
	}
	var (
		std   jwt.Claims
		extra accessClaims
		all   map[string]any
	)
	verified := false
	for _, k := range keys {
		if !keyFits(k, hdr.Algorithm) {
			continue
		}
		if err := tok.Claims(k.Key, &std, &extra, &all); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Identity{}, invalidToken("signature does not verify with the issuer's keys", nil)
	}
	if std.Expiry == nil {
		return Identity{}, invalidToken("token has no expiry", nil)
	}
	err = std.ValidateWithLeeway(jwt.Expected{
		Issuer:      v.cfg.Issuer,
		AnyAudience: jwt.Audience{v.cfg.Resource},
		Time:        v.cfg.Now(),
	}, v.cfg.Leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return Identity{}, invalidToken("token expired", err)
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Identity{}, invalidToken("token not valid yet", err)
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Identity{}, invalidToken("token from another issuer", err)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Identity{}, invalidToken("token not issued for this resource", err)
	case err != nil:
		return Identity{}, invalidToken("token claims are not valid", err)
	}
	user, _ := all[v.cfg.UserClaim].(string)
	if err := memory.ValidateID("user", user); err != nil {
		return Identity{}, invalidToken("claim "+v.cfg.UserClaim+" is not a usable user id", err)
	}
	id := Identity{User: user, Method: MethodOAuth, Credential: "oauth:" + std.Subject}
	if std.ID != "" {
		id.Credential += "/" + std.ID
	}
	if v.cfg.AgentClaim != "" {
		if agent, ok := all[v.cfg.AgentClaim].(string); ok && agent != "" {
			if err := memory.ValidateID("agent", agent); err != nil {
				return Identity{}, invalidToken("claim "+v.cfg.AgentClaim+" is not a usable agent name", err)
			}
			id.Agent = agent
		}
	}
	id.Scopes = strings.Fields(extra.Scope)
	switch scp := extra.Scp.(type) {
	case string:
		id.Scopes = append(id.Scopes, strings.Fields(scp)...)
	case []any:
		for _, s := range scp {
			if s, ok := s.(string); ok {
				id.Scopes = append(id.Scopes, s)
			}
		}
	}
	var missing []string
	for _, s := range v.cfg.RequiredScopes {
		if !slices.Contains(id.Scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return Identity{}, &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
			Description: "token lacks scope " + strings.Join(missing, " "), Scope: strings.Join(v.cfg.RequiredScopes, " ")}
	}
	return id, nil
}

// keyFits reports whether k may verify a signature made with alg: a public
// signing key of the algorithm's family, whose own alg (if stated) agrees.
func keyFits(k jose.JSONWebKey, alg string) bool {
	if !k.Valid() || !k.IsPublic() || k.Use != "" && k.Use != "sig" || k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// keysFor returns the keys that may have signed a token with key id kid
// (every key when kid is empty). An unknown kid fetches the keys again,
// at most once per RefreshInterval, for an issuer that rotated its keys.
func (v *OAuthVerifier) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.cfg.Now()
	since := now.Sub(v.fetched)
	stale := v.keys == nil || since >= v.cfg.MaxKeyAge
	if !stale && kid != "" && len(v.keys.Key(kid)) == 0 {
		stale = true
	}
	if stale && (v.fetched.IsZero() || since >= v.cfg.RefreshInterval) {
		v.fetched = now
		// The fetch outlives a client that gives up: its result serves
		// every request after, and a cancelled fetch would hold the next
		// one back for RefreshInterval.
		set, err := v.fetchKeys(context.WithoutCancel(ctx))
		if err != nil {
			v.lastError = err
			v.cfg.Logger.WarnContext(ctx, "oauth: cannot fetch the issuer's keys", "issuer", v.cfg.Issuer, "err", err)
		} else {
			v.keys, v.lastError = set, nil
		}
	}
	if v.keys == nil {
		if v.lastError != nil {
			return nil, v.lastError
		}
		return nil, errors.New("no keys fetched yet")
	}
	if kid == "" {
		return v.keys.Keys, nil
	}
	return v.keys.Key(kid), nil
}

// fetchKeys discovers the key URL when needed and fetches the key set.
func (v *OAuthVerifier) fetchKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, v.jwksURL, &set); err != nil {
		return nil, fmt.Errorf("fetch keys: %w", err)
	}
	return &set, nil
}

// discover reads the issuer's metadata and returns its jwks_uri; the
// metadata must name the same issuer (RFC 8414 section 3.3).
func (v *OAuthVerifier) discover(ctx context.Context) (string, error) {
	var errs []error
	for _, u := range metadataURLs(v.cfg.Issuer) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, u, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != v.cfg.Issuer {
			return "", fmt.Errorf("discover keys: metadata at %s names issuer %q, want %q", u, md.Issuer, v.cfg.Issuer)
		}
		if err := checkFetchURL("jwks_uri", md.JWKSURI); err != nil {
			return "", fmt.Errorf("discover keys: %w", err)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("discover keys: %w", errors.Join(errs...))
}

// metadataURLs are where an issuer's metadata may be, in the order the MCP
// authorization specification tries them: for an issuer with a path, the
// well-known name inserted before the path, then OpenID's appended form.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

// getJSON fetches u and decodes its JSON body (at most 1 MiB) into out.
func (v *OAuthVerifier) getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("GET %s: decode: %w", u, err)
	}
	return nil
}
