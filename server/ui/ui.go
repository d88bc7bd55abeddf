package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

//go:embed static templates
var assets embed.FS

// Caller is who makes a request, as Options.Access tells it.
type Caller struct {
	// Name is shown in the page header.
	Name string
	// User is the user whose memory is shown when the request names
	// none; empty means Options.DefaultUser.
	User string
	// Session is a secret that stays the same for one login; the CSRF
	// token of the caller's forms is derived from it. It must not be
	// empty.
	Session string
	// May reports whether the caller may see and change a scope; nil
	// means every scope.
	May func(memory.Scope) bool
}

func (c Caller) may(sc memory.Scope) bool { return c.May == nil || c.May(sc) }

// ErrNoCaller is what an Access function returns for a request that
// carries no valid credentials; the handler answers 401.
var ErrNoCaller = errors.New("not logged in")

// ErrUnavailable is what an Access function returns (wrapped) when the
// request's credentials cannot be checked now (the storage they are kept
// in is out of reach): the handler answers 503 with Retry-After, saying
// that nothing was changed, and does not send the person to log in again.
var ErrUnavailable = errors.New("memory is temporarily unavailable")

// unavailableMessage is the page of a 503.
const unavailableMessage = "Memory is temporarily unavailable; nothing was changed. Try again in a few seconds."

// Models describes the language model and embeddings endpoints the data
// directory is configured with, for the status page; never a key.
type Models struct {
	LLM        string
	Embeddings string
	// TokenEncoding names the encoding that counts injection tokens.
	TokenEncoding string
}

// ImportRequest is an import from the data page.
type ImportRequest struct {
	// Data is the uploaded file: a mnemo export or a DeerFlow memory.json.
	Data []byte
	// User moves the imported memory to this user; empty keeps the
	// export's users (a DeerFlow file goes to the default user).
	User string
	// May reports whether the caller may write a scope; an import that
	// touches another is refused before anything is written.
	May func(memory.Scope) bool
}

// Options configure the viewer. Access is required.
type Options struct {
	// Access tells who makes a request; an error (ErrNoCaller) answers
	// 401. It is called for every request but the static assets.
	Access func(*http.Request) (Caller, error)
	// Prefix is the path the handler is mounted under ("/ui"), without
	// a trailing slash; empty for the root. The handler strips it.
	Prefix string
	// Hosts are the Host header values accepted (host:port as the
	// browser sends it); any other is refused with 403, against DNS
	// rebinding. Empty accepts any Host: only for a server whose
	// authentication is not a cookie.
	Hosts []string
	// DefaultUser is the user shown when neither the request nor the
	// caller names one; empty means the service's user_id.
	DefaultUser string
	// DefaultAgent is the agent shown with DefaultUser.
	DefaultAgent string
	// LoginHint is the 401 page's advice (how to get in).
	LoginHint string
	// Models, DataDir and Version are shown on the status page.
	Models  Models
	DataDir string
	Version string
	// Export returns the export file of scopes (nil hides export).
	Export func(ctx context.Context, scopes []memory.Scope) ([]byte, error)
	// Import writes an uploaded file into empty scopes and says what it
	// imported (nil hides import).
	Import func(ctx context.Context, req ImportRequest) ([]string, error)
	// CSRFKey derives the CSRF tokens of the forms. Every instance
	// behind a load balancer must have the same key, so that a form
	// served by one is accepted by another; nil draws a key for this
	// handler alone (a single process, as "mnemo ui").
	CSRFKey []byte
	// LogoutPath, when set, is where the page header's log-out button
	// posts (outside the handler, which does not log in by itself).
	LogoutPath string
	// MaxBodyBytes bounds a request body (an import file included); zero
	// is 64 MiB. A larger body is answered 413.
	MaxBodyBytes int64
	// Now is the clock of charts and relative times; nil is time.Now.
	Now func() time.Time
	// Log receives the errors behind 500 answers; nil is slog.Default.
	Log *slog.Logger
}

// handler is the viewer.
type handler struct {
	svc   *engine.Service
	store memory.Store
	opt   Options
	mux   *http.ServeMux
	pages map[string]*templateSet
	// csrfKey derives each session's CSRF token: from Options.CSRFKey,
	// else new per handler.
	csrfKey []byte
	static  http.Handler
}

// New returns the viewer over svc and store (the store the service
// runs on; it lists scopes and tells revisions for live updates).
func New(svc *engine.Service, store memory.Store, opt Options) (http.Handler, error) {
	if svc == nil || store == nil {
		return nil, errors.New("new ui: a service and a store are required")
	}
	if opt.Access == nil {
		return nil, errors.New("new ui: Options.Access is required")
	}
	if opt.Prefix != "" && (!strings.HasPrefix(opt.Prefix, "/") || strings.HasSuffix(opt.Prefix, "/")) {
		return nil, fmt.Errorf("new ui: prefix %q must start with / and not end with one", opt.Prefix)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	if opt.DefaultUser == "" {
		opt.DefaultUser = svc.Config().UserID
	}
	if opt.LoginHint == "" {
		opt.LoginHint = "Open the viewer through the link its server printed."
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, fmt.Errorf("new ui: %w", err)
	}
	h := &handler{svc: svc, store: store, opt: opt, pages: pages, csrfKey: make([]byte, 32),
		static: http.StripPrefix("/static/", http.FileServerFS(static))}
	if len(opt.CSRFKey) > 0 {
		m := hmac.New(sha256.New, opt.CSRFKey)
		m.Write([]byte("mnemo-ui csrf key"))
		h.csrfKey = m.Sum(nil)
	} else {
		rand.Read(h.csrfKey)
	}
	h.routes()
	return h, nil
}

func (h *handler) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", h.page(h.profilePage))
	m.HandleFunc("GET /facts", h.page(h.factsPage))
	m.HandleFunc("GET /exchanges", h.page(h.exchangesPage))
	m.HandleFunc("GET /sessions", h.page(h.sessionsPage))
	m.HandleFunc("GET /history", h.page(h.historyPage))
	m.HandleFunc("GET /status", h.page(h.statusPage))
	m.HandleFunc("GET /preview", h.page(h.previewPage))
	m.HandleFunc("GET /data", h.page(h.dataPage))
	m.HandleFunc("GET /topic", h.page(h.topicPage))
	m.HandleFunc("GET /developers", h.page(h.developersPage))
	m.HandleFunc("GET /export", h.export)
	m.HandleFunc("GET /rev", h.rev)
	m.HandleFunc("POST /facts/add", h.action(h.addFact))
	m.HandleFunc("POST /facts/edit", h.action(h.editFact))
	m.HandleFunc("POST /facts/delete", h.result(h.deleteFact))
	m.HandleFunc("POST /facts/restore", h.action(h.restoreFact))
	m.HandleFunc("POST /exchanges/delete", h.result(h.deleteTurn))
	m.HandleFunc("POST /threads/delete", h.result(h.deleteThread))
	m.HandleFunc("POST /topic/forget", h.result(h.forgetTopic))
	m.HandleFunc("POST /profile/section", h.action(h.editSection))
	m.HandleFunc("POST /import", h.action(h.importData))
	m.HandleFunc("POST /forget", h.action(h.forgetScope))
	h.mux = m
}

// Security headers of every response.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer a browser sends
	// "Origin: null" on form posts, which the CSRF check refuses.
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")

	if len(h.opt.Hosts) > 0 && !slices.Contains(h.opt.Hosts, strings.ToLower(r.Host)) {
		h.refuse(w, http.StatusForbidden, "This address is not one the memory viewer answers on.")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(r, o) {
		h.refuse(w, http.StatusForbidden, "Requests from other sites are refused.")
		return
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		h.refuse(w, http.StatusForbidden, "Requests from other sites are refused.")
		return
	}
	path := r.URL.Path
	if h.opt.Prefix != "" {
		rest, ok := strings.CutPrefix(path, h.opt.Prefix)
		if !ok || rest != "" && rest[0] != '/' {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, h.opt.Prefix+"/", http.StatusSeeOther)
			return
		}
		path = rest
	}
	if strings.HasPrefix(path, "/static/") {
		hd.Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = path
		h.static.ServeHTTP(w, r2)
		return
	}
	hd.Set("Cache-Control", "no-store")
	caller, err := h.opt.Access(r)
	if errors.Is(err, ErrUnavailable) || errors.Is(err, memory.ErrUnavailable) {
		dropBody(w, r)
		w.Header().Set("Retry-After", "5")
		h.refuse(w, http.StatusServiceUnavailable, unavailableMessage)
		return
	}
	if err != nil || caller.Session == "" {
		dropBody(w, r)
		h.refuse(w, http.StatusUnauthorized, h.opt.LoginHint)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !h.sameOriginPost(r) {
			h.refuse(w, http.StatusForbidden, "This change did not come from the memory viewer's own page (its Origin is missing or foreign).")
			return
		}
		// A multipart form is parsed by the action; the token is
		// read from the header or the form.
		limit := h.opt.MaxBodyBytes
		if limit <= 0 {
			limit = maxUpload
		}
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			h.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("This upload is larger than the server accepts (%d bytes).", limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		csrf, err := csrfFrom(r)
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			h.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("This upload is larger than the server accepts (%d bytes).", limit))
			return
		}
		if !hmac.Equal([]byte(csrf), []byte(h.csrfToken(caller))) {
			h.refuse(w, http.StatusForbidden, "This form has expired or did not come from the memory viewer; reload the page and try again.")
			return
		}
	}
	// Every change made from here is the person's, in the history.
	ctx := memory.WithActor(context.WithValue(r.Context(), callerKey{}, caller), memory.ActorViewer)
	r2 := r.Clone(ctx)
	r2.URL.Path = path
	h.mux.ServeHTTP(w, r2)
}

// dropBody makes the server read none of the body of a request that is
// refused before it is read: the connection closes after the answer, and
// its read deadline is past, so that net/http does not wait for what is
// left of the body either (it would, to reuse the connection).
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}

// maxUpload bounds a request body (an import file).
const maxUpload = 64 << 20

type callerKey struct{}

func callerOf(r *http.Request) Caller { c, _ := r.Context().Value(callerKey{}).(Caller); return c }

// sameHost reports whether the origin (or referer) URL u names host.
func sameHost(u, host string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && strings.EqualFold(p.Host, host)
}

// sameOrigin reports whether the Origin header o of r names this host.
// "null" does when the browser marks the request same-origin: it sends
// a null Origin for a form posted from a page whose Referrer-Policy is
// no-referrer, and Sec-Fetch-Site is a header no page can set.
func sameOrigin(r *http.Request, o string) bool {
	if o == "null" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return sameHost(o, r.Host)
}

// sameOriginPost reports whether a state change comes from this host:
// by its Origin, or by its Referer when a browser sent no Origin.
func (h *handler) sameOriginPost(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		return sameOrigin(r, o)
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		return sameHost(ref, r.Host)
	}
	return false
}

// csrfFrom is the CSRF token a state change carries; the error is the
// form's that could not be read.
func csrfFrom(r *http.Request) (string, error) {
	if t := r.Header.Get("X-CSRF-Token"); t != "" {
		return t, nil
	}
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(8 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		return "", err
	}
	return r.FormValue("csrf"), nil
}

// csrfToken is the CSRF token of the caller's session.
func (h *handler) csrfToken(c Caller) string {
	m := hmac.New(sha256.New, h.csrfKey)
	m.Write([]byte("mnemo-ui csrf\x00" + c.Session))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// refuse answers a request the viewer will not serve, with a small page.
func (h *handler) refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	h.renderBare(w, code, http.StatusText(code), msg)
}
