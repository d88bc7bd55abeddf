package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// TokenLogin is the access of "mnemo ui", as Jupyter does it: the URL
// the command prints carries a random token; the first request with it
// gets a session cookie (HttpOnly, SameSite=Strict) and is redirected to
// the same address without the token. The token works once; every later
// request needs the cookie. The caller may see every scope.
type TokenLogin struct {
	token  string
	cookie string

	mu       sync.Mutex
	used     bool
	sessions map[string]bool
}

// NewToken returns a new random access token.
func NewToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewTokenLogin returns the login of token.
func NewTokenLogin(token string) *TokenLogin {
	sum := sha256.Sum256([]byte("mnemo-ui cookie\x00" + token))
	// The cookie's name differs per token: cookies are shared by every
	// port of a host, and two viewers may run side by side.
	return &TokenLogin{token: token, cookie: "mnemo_ui_" + hex.EncodeToString(sum[:6]), sessions: map[string]bool{}}
}

// Wrap handles the token exchange in front of next (the viewer): a
// request with ?token= gets a session when the token is right and
// unused, and is redirected without it either way.
func (l *TokenLogin) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("token") || r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		if sid, ok := l.exchange(q.Get("token")); ok {
			http.SetCookie(w, &http.Cookie{Name: l.cookie, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		q.Del("token")
		to := localPath(r.URL.EscapedPath())
		if enc := q.Encode(); enc != "" {
			to += "?" + enc
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, to, http.StatusSeeOther)
	})
}

// exchange starts a session for the token, once.
func (l *TokenLogin) exchange(token string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used || subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) != 1 {
		return "", false
	}
	l.used = true
	sid := NewToken()
	l.sessions[sid] = true
	return sid, true
}

// Caller is the Options.Access of the viewer: the session of the
// request's cookie, or ErrNoCaller.
func (l *TokenLogin) Caller(r *http.Request) (Caller, error) {
	c, err := r.Cookie(l.cookie)
	if err != nil {
		return Caller{}, ErrNoCaller
	}
	l.mu.Lock()
	ok := l.sessions[c.Value]
	l.mu.Unlock()
	if !ok {
		return Caller{}, ErrNoCaller
	}
	return Caller{Name: "local", Session: c.Value}, nil
}

// localPath returns p as a path on this server: a path that a browser
// would read as another host ("//evil.example/", "/\\evil.example") or
// that is not absolute gets a single leading slash, so a redirect to it
// never leaves the viewer.
func localPath(p string) string {
	return "/" + strings.TrimLeft(p, "/\\")
}
