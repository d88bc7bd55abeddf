package httpauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/mnemo-mcp/mnemo/internal/testutil"
)

// stack is the composed server of the example, over a fake MCP handler
// that answers with the identity it was given.
type stack struct {
	handler http.Handler
	tokens  *TokenFile
	iss     *fakeIssuer
	key     signingKey
	log     *testutil.LockedBuffer
	calls   int // requests the MCP handler read and answered
}

const testBodyLimit = 1024

// newStack builds the stack; each credential may make burst requests (the
// rate limiter's clock stands still).
func newStack(t testing.TB, ready func(context.Context) error, burst int) *stack {
	t.Helper()
	s := &stack{tokens: newTestTokenFile(t), iss: newFakeIssuer(t, false), log: &testutil.LockedBuffer{}}
	s.key = s.iss.newKey(t, "k1", jose.RS256, true)
	logger := slog.New(slog.NewJSONHandler(s.log, nil))
	oauth := newTestOAuth(t, s.iss, func(c *OAuthConfig) { c.Logger = logger })
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.calls++
		id, _ := IdentityFrom(r.Context())
		json.NewEncoder(w).Encode(id)
	})
	metadataURL, err := MetadataURL(testResource)
	if err != nil {
		t.Fatal(err)
	}
	authenticate, err := Authenticate(AuthOptions{
		Verifiers:           []Verifier{NewTokenVerifier(s.tokens.Path()), oauth},
		ResourceMetadataURL: metadataURL,
		Logger:              logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	origins, err := AllowedOrigins("127.0.0.1:8787", []string{"https://memory.example.com/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	guarded := http.NewServeMux()
	md := MetadataHandler(ResourceMetadata{Resource: testResource, AuthorizationServers: []string{s.iss.url}, ScopesSupported: []string{"mnemo:memory"}})
	guarded.Handle(MetadataPath, md)
	guarded.Handle(MetadataPath+"/mcp", md)
	guarded.Handle("/mcp", Chain(mcp,
		authenticate,
		RateLimit(RateOptions{Rate: 1, Burst: burst, Now: func() time.Time { return testNow }}),
		LimitBody(testBodyLimit)))
	root := http.NewServeMux()
	root.Handle("/healthz", Healthz())
	if ready == nil {
		ready = func(context.Context) error { return nil }
	}
	root.Handle("/readyz", Readyz(ready, logger))
	root.Handle("/", CheckHostOrigin(origins)(guarded))
	s.handler = AccessLog(logger)(root)
	return s
}

// request describes one request to the stack.
type request struct {
	method, path string
	host, origin string
	auth         []string // Authorization header values
	body         string
	chunked      bool // send the body with unknown length
}

func (s *stack) do(t testing.TB, rq request) *httptest.ResponseRecorder {
	t.Helper()
	if rq.method == "" {
		rq.method = http.MethodPost
	}
	if rq.path == "" {
		rq.path = "/mcp"
	}
	var body io.Reader = strings.NewReader(rq.body)
	if rq.chunked {
		body = io.MultiReader(strings.NewReader(rq.body)) // hides the length
	}
	r := httptest.NewRequest(rq.method, rq.path, body)
	if rq.chunked {
		r.ContentLength = -1
	}
	r.Host = "127.0.0.1:8787"
	if rq.host != "" {
		r.Host = rq.host
	}
	if rq.origin != "" {
		r.Header.Set("Origin", rq.origin)
	}
	for _, a := range rq.auth {
		r.Header.Add("Authorization", a)
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

func bearer(tok string) []string { return []string{"Bearer " + tok} }

func TestStackStatuses(t *testing.T) {
	s := newStack(t, nil, 100)
	alice, aliceTok := mustAdd(t, s.tokens, "alice", "")
	revoked, revokedTok := mustAdd(t, s.tokens, "carol", "")
	jwtOK := sign(t, s.key, claimsFor(s.iss.url, nil))
	// The revoked token works, then is revoked while the server runs.
	if w := s.do(t, request{auth: bearer(revoked)}); w.Code != http.StatusOK {
		t.Fatalf("carol's token before revoke: status %d, want 200", w.Code)
	}
	if _, err := s.tokens.Revoke(revokedTok.ID); err != nil {
		t.Fatal(err)
	}
	rm := `resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"`

	tests := []struct {
		name      string
		req       request
		status    int
		challenge string // in WWW-Authenticate; "-" for no header
		user      string // identity the MCP handler saw
	}{
		{"static token", request{auth: bearer(alice)}, 200, "-", "alice"},
		{"scheme in lower case", request{auth: []string{"bearer " + alice}}, 200, "-", "alice"},
		{"oauth token", request{auth: bearer(jwtOK)}, 200, "-", "alice"},
		{"allowed origin", request{auth: bearer(alice), origin: "http://localhost:8787"}, 200, "-", "alice"},
		{"public host and origin", request{auth: bearer(alice), host: "memory.example.com", origin: "https://memory.example.com"}, 200, "-", "alice"},
		{"no token", request{}, 401, "Bearer " + rm, ""},
		{"basic auth", request{auth: []string{"Basic YWxpY2U6eA=="}}, 401, rm, ""},
		{"malformed", request{auth: []string{"Bearer a b"}}, 400, `error="invalid_request"`, ""},
		{"empty bearer", request{auth: []string{"Bearer "}}, 400, `error="invalid_request"`, ""},
		{"two headers", request{auth: []string{"Bearer " + alice, "Bearer " + alice}}, 400, `error="invalid_request"`, ""},
		{"wrong token", request{auth: bearer(TokenPrefix + strings.Repeat("A", 43))}, 401, `error="invalid_token"`, ""},
		{"unknown kind", request{auth: bearer("opaque-token")}, 401, `error="invalid_token"`, ""},
		{"revoked without restart", request{auth: bearer(revoked)}, 401, `error="invalid_token", error_description="unknown or revoked token", ` + rm, ""},
		{"expired", request{auth: bearer(sign(t, s.key, claimsFor(s.iss.url, map[string]any{"exp": testNow.Add(-time.Hour).Unix()})))}, 401, `error_description="token expired"`, ""},
		{"not yet valid", request{auth: bearer(sign(t, s.key, claimsFor(s.iss.url, map[string]any{"nbf": testNow.Add(time.Hour).Unix()})))}, 401, `error_description="token not valid yet"`, ""},
		{"wrong issuer", request{auth: bearer(sign(t, s.key, claimsFor("https://evil.example", nil)))}, 401, `error_description="token from another issuer"`, ""},
		{"wrong audience", request{auth: bearer(sign(t, s.key, claimsFor(s.iss.url, map[string]any{"aud": "https://other.example/mcp"})))}, 401, `error_description="token not issued for this resource"`, ""},
		{"missing scope", request{auth: bearer(sign(t, s.key, claimsFor(s.iss.url, map[string]any{"scope": "openid"})))}, 403, `error="insufficient_scope", error_description="token lacks scope mnemo:memory", scope="mnemo:memory", ` + rm, ""},
		{"alg none", request{auth: bearer(unsigned(claimsFor(s.iss.url, nil)))}, 401, `error="invalid_token"`, ""},
		{"bad host", request{auth: bearer(alice), host: "evil.example:8787"}, 403, "-", ""},
		{"rebinding host without auth", request{host: "attacker.example"}, 403, "-", ""},
		{"foreign origin", request{auth: bearer(alice), origin: "https://evil.example"}, 403, "-", ""},
		{"other local port origin", request{auth: bearer(alice), origin: "http://localhost:3000"}, 403, "-", ""},
		{"null origin", request{auth: bearer(alice), origin: "null"}, 403, "-", ""},
		{"oversized body", request{auth: bearer(alice), body: strings.Repeat("x", testBodyLimit+1)}, 413, "-", ""},
		{"oversized chunked body", request{auth: bearer(alice), body: strings.Repeat("x", testBodyLimit+1), chunked: true}, 413, "-", ""},
		{"oversized chunked body without a token", request{body: strings.Repeat("x", testBodyLimit+1), chunked: true}, 401, "Bearer " + rm, ""},
		{"body at the limit", request{auth: bearer(alice), body: strings.Repeat("x", testBodyLimit), chunked: true}, 200, "-", "alice"},
		{"metadata without auth", request{method: http.MethodGet, path: MetadataPath}, 200, "-", ""},
		{"metadata at the resource path", request{method: http.MethodGet, path: MetadataPath + "/mcp"}, 200, "-", ""},
		{"healthz from any host", request{method: http.MethodGet, path: "/healthz", host: "10.0.0.5"}, 200, "-", ""},
		{"readyz", request{method: http.MethodGet, path: "/readyz"}, 200, "-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.calls
			w := s.do(t, tt.req)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %q", w.Code, tt.status, w.Body)
			}
			got := w.Header().Get("WWW-Authenticate")
			if tt.challenge == "-" && got != "" || tt.challenge != "-" && !strings.Contains(got, tt.challenge) {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
			reached := s.calls > before
			if reached != (tt.user != "") {
				t.Errorf("MCP handler reached = %v, want %v", reached, tt.user != "")
			}
			if tt.user != "" {
				var id Identity
				if err := json.Unmarshal(w.Body.Bytes(), &id); err != nil || id.User != tt.user {
					t.Errorf("identity = %+v (%v), want user %q", id, err, tt.user)
				}
			}
		})
	}
	_ = aliceTok
}

func TestStackMetadataDocument(t *testing.T) {
	s := newStack(t, nil, 100)
	w := s.do(t, request{method: http.MethodGet, path: MetadataPath})
	var md map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &md); err != nil {
		t.Fatalf("metadata is not JSON: %v", err)
	}
	want := map[string]any{
		"resource":                 testResource,
		"authorization_servers":    []any{s.iss.url},
		"scopes_supported":         []any{"mnemo:memory"},
		"bearer_methods_supported": []any{"header"},
	}
	for k, v := range want {
		if got, _ := json.Marshal(md[k]); string(got) != mustJSON(v) {
			t.Errorf("metadata %s = %s, want %s", k, got, mustJSON(v))
		}
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStackRateLimit(t *testing.T) {
	s := newStack(t, nil, 3)
	alice, _ := mustAdd(t, s.tokens, "alice", "")
	bob, _ := mustAdd(t, s.tokens, "bob", "")
	// The clock stands still: a burst of 3, then 429.
	for i := range 3 {
		if w := s.do(t, request{auth: bearer(alice)}); w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i+1, w.Code)
		}
	}
	w := s.do(t, request{auth: bearer(alice)})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Errorf("4th request: status %d, Retry-After %q; want 429 and 1", w.Code, w.Header().Get("Retry-After"))
	}
	if w := s.do(t, request{auth: bearer(bob)}); w.Code != http.StatusOK {
		t.Errorf("another token: status %d, want 200 (limits are per token)", w.Code)
	}
}

func TestLimiterRefills(t *testing.T) {
	now := testNow
	l := newLimiter(RateOptions{Rate: 2, Burst: 2, Now: func() time.Time { return now }, MaxKeys: 2})
	for i, want := range []time.Duration{0, 0, 500 * time.Millisecond} {
		if got := l.take("a"); got != want {
			t.Errorf("take %d = %v, want %v", i+1, got, want)
		}
	}
	now = now.Add(500 * time.Millisecond)
	if got := l.take("a"); got != 0 {
		t.Errorf("take after refill = %v, want 0", got)
	}
	l.take("b")
	now = now.Add(time.Hour)
	l.take("c") // over MaxKeys: the refilled buckets are forgotten
	if len(l.buckets) > 2 {
		t.Errorf("limiter holds %d buckets, want at most 2", len(l.buckets))
	}
}

func TestReadyzNotReady(t *testing.T) {
	s := newStack(t, func(context.Context) error { return errors.New("store at /secret/path closed") }, 100)
	w := s.do(t, request{method: http.MethodGet, path: "/readyz"})
	if w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), "secret") {
		t.Errorf("readyz = %d %q, want 503 without the error text", w.Code, w.Body)
	}
}

// TestAccessLogHoldsNoToken sends tokens every way a client might, good
// and bad, and checks that the log names requests and users but never a
// token or the Authorization header.
func TestAccessLogHoldsNoToken(t *testing.T) {
	s := newStack(t, nil, 100)
	alice, aliceTok := mustAdd(t, s.tokens, "alice", "")
	jwtOK := sign(t, s.key, claimsFor(s.iss.url, nil))
	expired := sign(t, s.key, claimsFor(s.iss.url, map[string]any{"exp": testNow.Add(-time.Hour).Unix()}))
	secrets := []string{alice, jwtOK, expired, "wrong-opaque-token", TokenPrefix + "notarealtoken"}
	for _, tok := range secrets {
		s.do(t, request{auth: bearer(tok)})
		s.do(t, request{auth: bearer(tok), path: "/mcp?access_token=" + tok})
		s.do(t, request{auth: []string{"Bearer " + tok + " junk"}})
		s.do(t, request{auth: bearer(tok), host: "evil.example"})
	}
	log := s.log.String()
	for _, tok := range secrets {
		for _, part := range strings.Split(tok, ".") {
			if len(part) > 8 && strings.Contains(log, part) {
				t.Errorf("log holds (part of) a token %.12q…", part)
			}
		}
	}
	for _, w := range []string{"Bearer", "Authorization", "access_token"} {
		if strings.Contains(log, w) {
			t.Errorf("log mentions %q", w)
		}
	}
	for _, w := range []string{`"user":"alice"`, `"credential":"` + aliceTok.ID + `"`, `"status":401`, `"status":403`, `"path":"/mcp"`, `"auth":"oauth"`} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %s:\n%s", w, log)
		}
	}
}

func TestParseBearer(t *testing.T) {
	tests := []struct {
		header, want string
		wantErr      bool
	}{
		{"", "", false},
		{"Basic abc", "", false},
		{"Bearer abc", "abc", false},
		{"BEARER abc", "abc", false},
		{"Bearer  abc", "abc", false},
		{"Bearer a.b-c_d~e+f/g==", "a.b-c_d~e+f/g==", false},
		{"Bearer", "", true},
		{"Bearer ", "", true},
		{"Bearer ==", "", true},
		{"Bearer a b", "", true},
		{"Bearer a=b", "", true},
		{"Bearer a\tb", "", true},
		{"Bearer \"abc\"", "", true},
		{"Bearerabc", "", false},
	}
	for _, tt := range tests {
		got, err := ParseBearer(tt.header)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseBearer(%q) = %q, %v; want %q, error %v", tt.header, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"", "Bearer abc", "bearer a.b.c", "Bearer ", "Basic x", "Bearer a b", "Bearer ===", "Bearer mnemo_AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		tok, err := ParseBearer(header)
		if err != nil {
			if tok != "" {
				t.Errorf("ParseBearer(%q) returned %q with an error", header, tok)
			}
			return
		}
		if tok == "" {
			return
		}
		// A token is a non-empty b64token found at the end of the header.
		if !strings.HasSuffix(header, tok) || strings.ContainsAny(tok, " \t\r\n\",;") {
			t.Errorf("ParseBearer(%q) = %q, not a b64token ending the header", header, tok)
		}
		if again, err := ParseBearer("Bearer " + tok); err != nil || again != tok {
			t.Errorf("ParseBearer(Bearer %q) = %q, %v; want the same token", tok, again, err)
		}
	})
}
