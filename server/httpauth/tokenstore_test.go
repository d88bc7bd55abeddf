package httpauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// memTokens is a TokenStore in memory that counts its loads and can be
// made to fail, as a database that is down.
type memTokens struct {
	mu     sync.Mutex
	tokens []Token
	loads  int
	down   bool
}

func (m *memTokens) AddToken(_ context.Context, t Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens = append(m.tokens, t)
	return nil
}

func (m *memTokens) Tokens(context.Context) ([]Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.down {
		return nil, errors.New("connection refused")
	}
	return append([]Token(nil), m.tokens...), nil
}

func (m *memTokens) RevokeToken(_ context.Context, id string) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.tokens {
		if t.ID == id {
			m.tokens = append(m.tokens[:i], m.tokens[i+1:]...)
			return t, nil
		}
	}
	return Token{}, ErrNoToken
}

func (m *memTokens) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

// TestStoreVerifier follows one token through a shared store as two
// instances' verifiers see it: accepted on both when added through one,
// refused on both once revoked and announced, refused when the store
// cannot be read, and the list loaded again only when it must be.
func TestStoreVerifier(t *testing.T) {
	ctx := t.Context()
	store := &memTokens{}
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := NewStoreVerifier(store, StoreVerifierOptions{Now: clock})
	b := NewStoreVerifier(store, StoreVerifierOptions{Now: clock})
	check := func(what string, v *StoreVerifier, token string, wantOK bool) {
		t.Helper()
		id, err := v.Verify(ctx, token)
		if ok := err == nil; ok != wantOK {
			t.Errorf("%s: Verify() = %+v, %v; want accepted %v", what, id, err, wantOK)
		}
	}
	alice, aliceTok, err := IssueToken(ctx, store, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	check("alice on a", a, alice, true)
	check("alice on b", b, alice, true)
	if id, _ := a.Verify(ctx, alice); id.User != "alice" || id.Credential != aliceTok.ID || id.Method != MethodToken {
		t.Errorf("identity = %+v", id)
	}
	if _, err := a.Verify(ctx, "eyJhbGciOi.not-ours"); !errors.Is(err, ErrUnrecognized) {
		t.Errorf("a JWT: %v, want ErrUnrecognized", err)
	}

	// A token added elsewhere: a fresh list does not know it, and a
	// miss loads again only once the list is MissAge old.
	loads := store.loads
	bob, _, _ := IssueToken(ctx, store, "bob", "")
	check("bob on a list just loaded", a, bob, false)
	check("bob, again", a, bob, false)
	if store.loads != loads {
		t.Errorf("unknown tokens on a fresh list loaded it %d times, want 0", store.loads-loads)
	}
	now = now.Add(time.Second)
	check("bob once the list is a second old", a, bob, true)

	// Revoked: refused at once where the change is announced, and by
	// MaxAge at the latest where it is not.
	if _, err := store.RevokeToken(ctx, aliceTok.ID); err != nil {
		t.Fatal(err)
	}
	a.Changed()
	check("alice revoked, on a (announced)", a, alice, false)
	now = now.Add(2 * time.Second)
	check("alice revoked, on b, 3 s after its load", b, alice, false)

	// The store down: every static token is refused, until it is back.
	store.setDown(true)
	now = now.Add(3 * time.Second)
	check("bob, store down", a, bob, false)
	if _, err := a.Verify(ctx, bob); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("store down: %v, want static tokens unavailable", err)
	}
	store.setDown(false)
	check("bob, store back", a, bob, true)
}

// TestCheckHostOriginNull: the opaque origin a browser sends for a form
// posted from a no-referrer page passes only when the browser marks the
// request same-origin; refusals are a page for a browser that names the
// setting.
func TestCheckHostOriginNull(t *testing.T) {
	origins, err := AllowedOrigins("127.0.0.1:8787", []string{"https://memory.example.com/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	origins.Setting = "http_allowed_hosts"
	h := CheckHostOrigin(origins)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tests := []struct {
		name, host, origin, site string
		want                     int
		says                     string
	}{
		{"no origin", "127.0.0.1:8787", "", "", http.StatusOK, ""},
		{"own origin", "127.0.0.1:8787", "http://127.0.0.1:8787", "same-origin", http.StatusOK, ""},
		{"public origin", "memory.example.com", "https://memory.example.com", "same-origin", http.StatusOK, ""},
		{"null, same-origin", "127.0.0.1:8787", "null", "same-origin", http.StatusOK, ""},
		{"null, same-site", "127.0.0.1:8787", "null", "same-site", http.StatusForbidden, "another site"},
		{"null, cross-site", "127.0.0.1:8787", "null", "cross-site", http.StatusForbidden, "another site"},
		{"null, no fetch metadata", "127.0.0.1:8787", "null", "", http.StatusForbidden, "another site"},
		{"foreign origin", "127.0.0.1:8787", "http://127.0.0.1:9999", "same-site", http.StatusForbidden, "http_allowed_hosts"},
		{"foreign host", "evil.example", "", "", http.StatusForbidden, "http_allowed_hosts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/ui/login", nil)
			r.Host = tc.host
			r.Header.Set("Accept", "text/html,application/xhtml+xml")
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.says) {
				t.Errorf("status %d, body %q; want %d saying %q", w.Code, w.Body.String(), tc.want, tc.says)
			}
			if w.Code == http.StatusForbidden && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				t.Errorf("a browser's refusal is %q, want a page", w.Header().Get("Content-Type"))
			}
		})
	}
	// The host a page shows is escaped.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "<b>x</b>"
	r.Header.Set("Accept", "text/html")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if strings.Contains(w.Body.String(), "<b>") {
		t.Errorf("the refusal page holds the Host unescaped: %s", w.Body.String())
	}
}
