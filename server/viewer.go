package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/server/ui"
)

// uiPath is where serve --http mounts the memory viewer.
const uiPath = "/ui"

// uiLoginRate and UILoginBurst bound the logins one client address may
// try: 10 at once, then one every 6 seconds; UILoginConcurrent bounds the
// login forms of one address being read at once (a body that trickles in
// holds its connection until http_read_timeout).
const (
	uiLoginRate       = 1.0 / 6
	UILoginBurst      = 10
	UILoginConcurrent = 4
)

// UICookie holds the bearer token of a browser logged in to the viewer.
// The token itself, not a session of this process, so that any instance
// behind a load balancer answers and a revoked token stops working at
// once: every request is verified again, as on /mcp.
const UICookie = "mnemo_ui_token"

// uiLogin is the viewer's authentication under serve --http: a browser
// sends no Authorization header on page loads, so a person logs in once
// with a token (from mnemo token add, or an OAuth access token) on
// /ui/login, kept in an HttpOnly, SameSite=Strict cookie scoped to /ui.
type uiLogin struct {
	verifiers []httpauth.Verifier
	secure    bool // the cookie is sent over HTTPS only
	insecure  bool // --insecure-no-auth: everyone is everyone
	// shared is the CSRF session of an unauthenticated server, derived
	// from the viewer's key so that every instance has the same.
	shared string
	log    *slog.Logger
}

// newUILogin returns the viewer's login over verifiers; key is the
// viewer's key, the same for every instance on the storage.
func newUILogin(verifiers []httpauth.Verifier, key []byte, secure, insecure bool, log *slog.Logger) *uiLogin {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mnemo-ui session of an unauthenticated server"))
	return &uiLogin{verifiers: verifiers, secure: secure, insecure: insecure, shared: hex.EncodeToString(m.Sum(nil)), log: log}
}

// verify returns the identity of token, trying each verifier.
func (l *uiLogin) verify(r *http.Request, token string) (httpauth.Identity, error) {
	for _, v := range l.verifiers {
		id, err := v.Verify(r.Context(), token)
		if errors.Is(err, httpauth.ErrUnrecognized) {
			continue
		}
		return id, err
	}
	return httpauth.Identity{}, httpauth.ErrUnrecognized
}

// caller is the viewer's Options.Access: the cookie's token (or a bearer
// header, for scripts), verified; the caller sees only their own scopes.
func (l *uiLogin) caller(r *http.Request) (ui.Caller, error) {
	if l.insecure {
		return ui.Caller{Name: "local (no authentication)", Session: l.shared}, nil
	}
	token, err := httpauth.ParseBearer(r.Header.Get("Authorization"))
	if err != nil || token == "" {
		c, cerr := r.Cookie(UICookie)
		if cerr != nil || c.Value == "" {
			return ui.Caller{}, ui.ErrNoCaller
		}
		token = c.Value
	}
	id, err := l.verify(r, token)
	if errors.Is(err, httpauth.ErrUnavailable) {
		return ui.Caller{}, fmt.Errorf("check the viewer's token: %w: %w", ui.ErrUnavailable, err)
	}
	if err != nil {
		return ui.Caller{}, ui.ErrNoCaller
	}
	sum := sha256.Sum256([]byte("mnemo-ui session\x00" + token))
	return ui.Caller{
		Name:    id.User,
		User:    id.User,
		Session: hex.EncodeToString(sum[:]),
		May: func(sc memory.Scope) bool {
			return sc.UserID == id.User && (id.Agent == "" || sc.AgentName == id.Agent)
		},
	}, nil
}

var uiLoginPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mnemo — log in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box}button{font:inherit;padding:.5rem 1rem;margin-top:.75rem}
.err{color:#a00000}</style></head>
<body><main><h1>mnemo memory viewer</h1>
{{if .Failed}}<p class="err" role="alert">That token was not accepted: it is unknown, revoked or expired.</p>{{end}}
{{if .Wait}}<p class="err" role="alert">{{.Busy}} Please wait {{.Wait}}, then try again.</p>{{end}}
{{if .Unavailable}}<p class="err" role="alert">Memory is temporarily unavailable; nothing was changed. Your token was not checked: try again in a few seconds.</p>{{end}}
<form method="post" action="{{.Action}}">
<label for="token">Your access token</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus>
<button type="submit">Log in</button>
</form>
<p>Use the token <code>mnemo token add --user NAME</code> printed for you, or an access token of the server's OAuth issuer. You see only your own memory.</p>
</main></body></html>`))
})

// handleLogin serves /ui/login: the form, and its POST, which sets the
// cookie when the token is accepted.
func (l *uiLogin) handleLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// same-origin, as the viewer's pages: under no-referrer a browser
	// posts the form with "Origin: null" (accepted only with
	// Sec-Fetch-Site: same-origin, which older browsers do not send).
	w.Header().Set("Referrer-Policy", "same-origin")
	switch r.Method {
	case http.MethodGet:
		uiLoginPage().Execute(w, map[string]any{"Action": uiPath + "/login"})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		token := strings.TrimSpace(r.PostFormValue("token"))
		_, err := l.verify(r, token)
		if token != "" && errors.Is(err, httpauth.ErrUnavailable) {
			l.log.Warn("viewer login: the token cannot be checked now", "err", err)
			w.Header().Set("Retry-After", strconv.Itoa(int(httpauth.RetryUnavailable.Seconds())))
			w.WriteHeader(http.StatusServiceUnavailable)
			uiLoginPage().Execute(w, map[string]any{"Action": uiPath + "/login", "Unavailable": true})
			return
		}
		if token == "" || err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			uiLoginPage().Execute(w, map[string]any{"Action": uiPath + "/login", "Failed": true})
			return
		}
		http.SetCookie(w, &http.Cookie{Name: UICookie, Value: token, Path: uiPath, HttpOnly: true,
			Secure: l.secure, SameSite: http.SameSiteStrictMode, MaxAge: int((12 * time.Hour).Seconds())})
		http.Redirect(w, r, uiPath+"/", http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// refuseLogin answers a login refused by a limit (429, Retry-After
// already set) with the login page, saying why and when to try again in
// words a person reads: the header is not on the screen.
func refuseLogin(busy string) func(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	return func(w http.ResponseWriter, r *http.Request, retry time.Duration) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusTooManyRequests)
		uiLoginPage().Execute(w, map[string]any{"Action": uiPath + "/login", "Busy": busy, "Wait": waitText(retry)})
	}
}

// waitText is retry in words: "1 second", "6 seconds", "2 minutes".
func waitText(retry time.Duration) string {
	secs := max(1, int(retry.Round(time.Second)/time.Second))
	switch {
	case secs == 1:
		return "1 second"
	case secs < 120:
		return strconv.Itoa(secs) + " seconds"
	}
	return strconv.Itoa((secs+59)/60) + " minutes"
}

// logoutPath is where the viewer's log-out button posts: nowhere without
// authentication.
func logoutPath(l *uiLogin) string {
	if l.insecure {
		return ""
	}
	return uiPath + "/logout"
}

// handleLogout serves /ui/logout: it clears the cookie. The server's
// Origin check refuses a post from another site.
func (l *uiLogin) handleLogout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: UICookie, Value: "", Path: uiPath, HttpOnly: true, Secure: l.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, uiPath+"/login", http.StatusSeeOther)
}

// mountUI adds the viewer under /ui to mux, behind the same tokens or
// OAuth issuer as /mcp. The Host and Origin checks are the server's
// (CheckHostOrigin wraps mux), so the viewer's own are off.
func mountUI(mux *http.ServeMux, svc *engine.Service, store memory.Store, cfg Config, login *uiLogin, key []byte, log *slog.Logger) error {
	hint := "Log in at " + uiPath + "/login with your token (mnemo token add --user NAME prints one) or an OAuth access token."
	var opt ui.Options
	if cfg.Viewer != nil {
		opt = cfg.Viewer(svc, store)
	}
	opt.Prefix = uiPath
	opt.Access = login.caller
	opt.DefaultUser = cfg.Memory.UserID
	opt.LoginHint = hint
	opt.Version = cfg.Version
	opt.Log = log
	opt.CSRFKey = key
	opt.LogoutPath = logoutPath(login)
	opt.MaxBodyBytes = cfg.HTTP.MaxBodyBytes
	h, err := ui.New(svc, store, opt)
	if err != nil {
		return err
	}
	// Tokens tried on the login form are limited per client address (the
	// one a trusted proxy reports, see trusted_proxies), as /mcp limits
	// each credential: guessing goes no faster than this.
	tries := httpauth.Chain(http.HandlerFunc(login.handleLogin),
		httpauth.LimitConcurrent(httpauth.ConcurrencyOptions{Max: UILoginConcurrent,
			Refuse: refuseLogin("Too many logins from your address are still being sent.")}),
		httpauth.RateLimit(httpauth.RateOptions{Rate: uiLoginRate, Burst: UILoginBurst,
			Refuse: refuseLogin("Too many tries to log in from your address.")}))
	mux.HandleFunc(uiPath+"/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			tries.ServeHTTP(w, r)
			return
		}
		login.handleLogin(w, r)
	})
	mux.HandleFunc(uiPath+"/logout", login.handleLogout)
	mux.Handle(uiPath+"/", h)
	mux.Handle(uiPath, http.RedirectHandler(uiPath+"/", http.StatusMovedPermanently))
	return nil
}
