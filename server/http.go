package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/tools"
)

// HTTP serving: mnemo serve --http [ADDR].
//
// One endpoint, /mcp, speaks MCP's Streamable HTTP transport statelessly:
// no request depends on an earlier one reaching the same process, so any
// instance behind a load balancer answers any request. Memory is keyed by
// the authenticated user and the tool arguments, never by a transport
// session. The guards around it are package httpauth's, composed as its
// example shows.

// DefaultHTTPAddr is where serve --http listens without an address.
const DefaultHTTPAddr = "127.0.0.1:8787"

const (
	// MCPPath is the MCP endpoint's path.
	MCPPath = "/mcp"
	// headerReadTimeout is how long a request's header may take to
	// arrive, at most (http_read_timeout when shorter).
	headerReadTimeout = 10 * time.Second
	// streamRecheck is how often the credential of an open notification
	// stream is checked again, so that a revoked token's stream ends.
	streamRecheck = 5 * time.Second
)

// HTTPConfig is what serve --http reads from the settings.
type HTTPConfig struct {
	// PublicURL is the URL clients reach the MCP endpoint by; empty: the
	// listen address's.
	PublicURL string
	// AllowedHosts are more host names or origins allowed in Host and
	// Origin.
	AllowedHosts []string
	// TrustedProxies are the balancers whose X-Forwarded-For and
	// Forwarded headers name the client.
	TrustedProxies []string
	TLSCertFile    string
	TLSKeyFile     string
	// OAuth resource server: the issuer whose JWTs are accepted.
	OAuthIssuer     string
	OAuthJWKSURL    string
	OAuthScope      string
	OAuthUserClaim  string
	OAuthAgentClaim string
	MaxBodyBytes    int64
	// ReadTimeout is how long a request's body may take to arrive, on
	// every route (http_max_body_bytes at 70 KB/s by default).
	ReadTimeout time.Duration
	Rate        float64
	Burst       int
}

// DefaultHTTPConfig is the HTTP settings' defaults.
func DefaultHTTPConfig() HTTPConfig {
	return HTTPConfig{OAuthUserClaim: "sub", MaxBodyBytes: 4 << 20, ReadTimeout: time.Minute, Rate: 20, Burst: 40}
}

// readTimeout is ReadTimeout, or its default when unset.
func (hc HTTPConfig) readTimeout() time.Duration {
	if hc.ReadTimeout <= 0 {
		return DefaultHTTPConfig().ReadTimeout
	}
	return hc.ReadTimeout
}

// NoAuth is the refusal to serve HTTP without a way to authenticate, where
// names the (empty) token store.
func NoAuth(where string) string { return fmt.Sprintf(errNoAuth, where) }

// errNoAuth is NoAuth's text.
const errNoAuth = `refusing to serve HTTP without authentication: no tokens in %s and no oauth_issuer.
Configure one of:
  mnemo token add --user NAME             a bearer token for one user (printed once)
  MNEMO_OAUTH_ISSUER=https://issuer.example.com   accept that issuer's OAuth access tokens
or, on a loopback address only, pass --insecure-no-auth to serve without authentication`

// LoopbackHost reports whether host names this machine only.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HTTPOptions are serve --http's per-invocation choices.
type HTTPOptions struct {
	// Addr is the HOST:PORT to listen on.
	Addr string
	// Insecure serves without authentication (--insecure-no-auth, on a
	// loopback address only).
	Insecure bool
}

// httpOptions are HTTPOptions and what HTTP finds once the store is open.
type httpOptions struct {
	addr     string
	insecure bool
	// tokens checks the static tokens (where names them).
	tokens httpauth.Verifier
	where  string
}

// Refusal is a reason not to start that the person can fix; HTTP returns
// it, and the command prints it as a usage error.
type Refusal struct{ Msg string }

func (r Refusal) Error() string { return r.Msg }

// HTTP serves MCP over HTTP on opts.Addr until ctx is cancelled
// (SIGINT/SIGTERM), then shuts down: it stops accepting, ends the
// notification streams, lets in-flight calls finish and runs pending
// memory updates, each within shutdown_grace. stderr is told where it
// listens (scripts wait for that line).
func HTTP(ctx context.Context, cfg Config, o HTTPOptions, stderr io.Writer, log *slog.Logger) (err error) {
	opts := httpOptions{addr: o.Addr, insecure: o.Insecure}
	hc := cfg.HTTP
	var tlsConfig *tls.Config
	if hc.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(hc.TLSCertFile, hc.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("load tls_cert_file and tls_key_file: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	defer ln.Close()
	bound := ln.Addr().String()
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	endpoint := scheme + "://" + bound + MCPPath
	resource := endpoint
	if hc.PublicURL != "" {
		resource = hc.PublicURL
	}

	// The memory service's records also go to the clients that may see
	// them (tools/logging.go); the HTTP layer's (access log, auth) and the
	// store's (they name the database: its host, role and name) only to
	// stderr.
	clientLog := tools.NewClientLog(log.Handler())
	store, err := cfg.OpenStore(ctx, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	var watchTokens func(context.Context)
	opts.tokens, opts.where, watchTokens = tokenVerifier(cfg.DataDir, store)
	if _, shared := store.(*postgres.Store); shared && !opts.insecure && hc.OAuthIssuer == "" {
		ts, _ := TokenStore(cfg.DataDir, store)
		toks, err := ts.Tokens(ctx)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			return Refusal{NoAuth(opts.where)}
		}
	}
	key, err := uiKey(ctx, cfg.DataDir, store)
	if err != nil {
		return err
	}
	built := make(chan struct{})
	svc, err := cfg.OpenService(store, slog.New(clientLog), built)
	if err != nil {
		close(built)
		return err
	}
	// The forget question's answers are signed with a key every instance
	// shares (derived from the viewer's), so any instance takes them.
	confirmKey := hmac.New(sha256.New, key)
	confirmKey.Write([]byte("mnemo forget_memory confirm key"))
	opt := []tools.Option{tools.WithLLMConfigured(cfg.LLMConfigured), tools.WithClientLog(clientLog), tools.WithStatelessHTTP(),
		tools.WithConfirmKey(confirmKey.Sum(nil))}
	if opts.insecure {
		opt = append(opt, tools.WithDefaultUser(cfg.Memory.UserID))
	} else {
		opt = append(opt, tools.WithAuthenticatedCallers())
	}
	mcpServer := tools.NewServer(svc, cfg.Version, opt...)
	close(built)

	secure := tlsConfig != nil || strings.HasPrefix(hc.PublicURL, "https://")
	handler, err := httpHandler(mcpServer, cfg, opts, bound, resource, log, func(mux *http.ServeMux, verifiers []httpauth.Verifier) error {
		return mountUI(mux, svc, store, cfg, newUILogin(verifiers, key, secure, opts.insecure, log), key, log)
	})
	if err != nil {
		return err
	}
	var ready atomic.Bool
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	headerTimeout := min(headerReadTimeout, hc.readTimeout())
	srv := &http.Server{
		Handler: withStreamContext(streams, handler.handler(func(ctx context.Context) error { return readiness(&ready) })),
		// The whole request has its header's time and the body's; the
		// root handler's BodyDeadline lifts it once the body is read (or
		// at once without one), so that a stream is not cut by it.
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       headerTimeout + hc.readTimeout(),
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	stopStart := startService(ctx, svc, log, cfg.LowGC, nil)
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	watched := make(chan struct{})
	go func() { defer close(watched); watchTokens(watchCtx) }()
	defer func() { stopWatch(); <-watched }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ready.Store(true)
	// The listening line comes last: scripts wait for it, and then
	// have the others.
	if msg := plainHTTPWarning(bound, tlsConfig != nil, hc.PublicURL); msg != "" {
		fmt.Fprintf(stderr, "mnemo: warning: %s\n", msg)
		log.Warn(msg, "addr", bound)
	}
	if !opts.insecure {
		fmt.Fprintf(stderr, "mnemo: memory viewer: log in at %s with a token (mnemo token add --user NAME)\n", LoginURL(resource))
	}
	fmt.Fprintf(stderr, "mnemo: listening on %s\n", endpoint)
	log.Info("serving MCP over HTTP",
		"version", cfg.Version, "url", endpoint, "resource", resource, "data_dir", cfg.DataDir,
		"auth", handler.authText, "llm", cfg.LLM)

	select {
	case err = <-served:
		err = fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
		log.Info("signal received; shutting down", "grace", cfg.ShutdownGrace)
	}
	ready.Store(false)
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	// Shutdown stops accepting and waits for the requests in flight; the
	// notification streams would keep it waiting, so they end first.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(grace) }()
	endStreams()
	handler.streamable.CloseSessions(grace)
	if serr := <-shut; serr != nil {
		log.Warn("requests still running when shutdown_grace ran out; closing their connections", "err", serr)
		srv.Close()
	}
	stopStart()
	svcGrace, cancelSvc := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancelSvc()
	svc.Close(svcGrace)
	return err
}

// readiness is /readyz's check: ready while serving, not once shutting
// down, so that a load balancer stops sending requests.
func readiness(ready *atomic.Bool) error {
	if !ready.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// startService loads the default scope and resumes pending updates in the
// background, once after is closed (at once when it is nil): stdio serve
// waits for its initialize answer. lowGC lowers the GC percent to
// serveGCPercent once the scope is loaded, with at least gcHeadroom of
// growth between collections (paceGC). The returned func stops both and
// waits.
func startService(ctx context.Context, svc *engine.Service, log *slog.Logger, lowGC bool, after <-chan struct{}) func() {
	startCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stopGC := func() {}
	wg.Go(func() {
		if after != nil {
			select {
			case <-after:
			case <-startCtx.Done():
				return
			}
		}
		if err := svc.Preload(startCtx, "", ""); err != nil && startCtx.Err() == nil {
			log.Warn("cannot preload the default user's memory; it is loaded on first use", "err", err)
		}
		if lowGC {
			stopGC = paceGC(serveGCPercent, gcHeadroom)
		}
		if err := svc.Start(startCtx); err != nil && startCtx.Err() == nil {
			log.Error("cannot resume pending memory updates", "err", err)
		}
	})
	return func() { cancel(); wg.Wait(); stopGC() }
}

// httpStack is the composed HTTP handler and what shutdown needs of it.
type httpStack struct {
	streamable *server.StreamableHTTPServer
	handler    func(ready func(context.Context) error) http.Handler
	authText   string // how requests are authenticated, for the log
}

// httpHandler composes the routes of serve --http behind the one chain
// every route passes (chain.go):
//
//	chain → /healthz, /readyz (load balancers probe by address: no Host check)
//	      → Protected Resource Metadata
//	      → /mcp: dropSessionID → Authenticate → caller → RateLimit → MCP
//	      → /ui (mount: the viewer checks its login on every page)
//	      → anything else: 404
//
// Every request's body has http_read_timeout to arrive and is counted
// against http_max_body_bytes as it is read, whatever its route. Nothing
// of a body on /mcp is read before its sender is authenticated and within
// their rate.
//
// mount, when not nil, adds more pages to the mux (the viewer under /ui),
// given the verifiers of /mcp (none with --insecure-no-auth); they pass
// the same chain.
func httpHandler(mcpServer *server.MCPServer, cfg Config, opts httpOptions, bound, resource string, log *slog.Logger,
	mount func(mux *http.ServeMux, verifiers []httpauth.Verifier) error) (*httpStack, error) {
	hc := cfg.HTTP
	streamable := server.NewStreamableHTTPServer(mcpServer,
		server.WithStateLess(true),
		// A stateless server hands every GET stream the same empty session
		// id, so two users' streams would share one session and its
		// notifications; each stream gets its own, never told to anyone.
		server.WithSessionIdManagerResolver(streamSessions{}),
		// CheckHostOrigin does this, for the public URL and allowed hosts
		// too; mcp-go's own check would refuse a proxy on this machine.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(log),
	)
	st := &httpStack{streamable: streamable}
	guardedMCP := []func(http.Handler) http.Handler{dropSessionID}
	var authServers []string
	var verifiers []httpauth.Verifier
	if opts.insecure {
		st.authText = "none (--insecure-no-auth, loopback only)"
		log.Warn("serving HTTP without authentication: every local process can read and change every user's memory")
	} else {
		verifiers = []httpauth.Verifier{opts.tokens}
		st.authText = "tokens in " + opts.where
		if hc.OAuthIssuer != "" {
			var scopes []string
			if hc.OAuthScope != "" {
				scopes = strings.Fields(hc.OAuthScope)
			}
			oauth, err := httpauth.NewOAuthVerifier(httpauth.OAuthConfig{
				Issuer: hc.OAuthIssuer, Resource: resource, JWKSURL: hc.OAuthJWKSURL,
				RequiredScopes: scopes, UserClaim: hc.OAuthUserClaim, AgentClaim: hc.OAuthAgentClaim,
				Logger: log,
			})
			if err != nil {
				return nil, err
			}
			verifiers = append(verifiers, oauth)
			authServers = []string{hc.OAuthIssuer}
			st.authText += ", OAuth tokens of " + hc.OAuthIssuer + " for " + resource
		}
		metadataURL, err := httpauth.MetadataURL(resource)
		if err != nil {
			return nil, err
		}
		authenticate, err := httpauth.Authenticate(httpauth.AuthOptions{
			Verifiers: verifiers, ResourceMetadataURL: metadataURL, Scope: hc.OAuthScope, Logger: log,
			Recheck: streamRecheck})
		if err != nil {
			return nil, err
		}
		guardedMCP = append(guardedMCP, authenticate, withCaller)
	}
	guardedMCP = append(guardedMCP, httpauth.RateLimit(httpauth.RateOptions{Rate: hc.Rate, Burst: hc.Burst}))

	common, err := chain(hc, bound, log)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	if !opts.insecure {
		md := httpauth.MetadataHandler(httpauth.ResourceMetadata{
			Resource: resource, AuthorizationServers: authServers,
			ScopesSupported: strings.Fields(hc.OAuthScope), ResourceName: "mnemo memory"})
		mux.Handle(httpauth.MetadataPath, md)
		if p := resourcePath(resource); p != "" && p != "/" {
			mux.Handle(httpauth.MetadataPath+p, md)
		}
	}
	mux.Handle(MCPPath, httpauth.Chain(streamable, guardedMCP...))
	if mount != nil {
		if err := mount(mux, verifiers); err != nil {
			return nil, err
		}
	}
	st.handler = func(ready func(context.Context) error) http.Handler {
		mux.Handle(healthzPath, httpauth.Healthz())
		mux.Handle(readyzPath, httpauth.Readyz(ready, log))
		return httpauth.Chain(mux, common...)
	}
	return st, nil
}

// resourcePath is the path of the resource URL, for its metadata's
// well-known URL (RFC 9728 section 3.1).
func resourcePath(resource string) string {
	_, rest, ok := strings.Cut(resource, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return ""
}

// withCaller makes the authenticated identity the tools' caller, in the
// request's own context: the MCP server's session hooks see that context
// (a GET stream's session is registered with it), not the context function's.
func withCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := httpauth.IdentityFrom(r.Context()); ok {
			r = r.WithContext(tools.WithCaller(r.Context(), tools.Caller{User: id.User, Agent: id.Agent}))
		}
		next.ServeHTTP(w, r)
	})
}

// dropSessionID removes a client's Mcp-Session-Id: a stateless server
// mints none, and one naming another client's notification stream must
// not reach it.
func dropSessionID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(server.HeaderKeySessionID) != "" {
			r.Header.Del(server.HeaderKeySessionID)
		}
		next.ServeHTTP(w, r)
	})
}

// withStreamContext ends the requests that are notification streams (a
// GET, or a subscriptions/listen POST of protocol 2026-07-28) when
// streams is cancelled at shutdown; other requests run to their end. A
// stream's HTTP/1 connection closes when the stream ends (at shutdown, or
// when its token is revoked): it is not kept for another request.
func withStreamContext(streams context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Header.Get(mcp.HeaderMethod) == string(mcp.MethodSubscriptionsListen) {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(streams, cancel)
			defer stop()
			r = r.WithContext(ctx)
			if r.ProtoMajor == 1 {
				w = &closingStream{ResponseWriter: w}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// closingStream answers an event stream with Connection: close (in place
// of the keep-alive mcp-go sets), so that the connection ends with it.
type closingStream struct {
	http.ResponseWriter
	wrote bool
}

func (w *closingStream) WriteHeader(code int) {
	if !w.wrote && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.Header().Set("Connection", "close")
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *closingStream) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *closingStream) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *closingStream) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamSessions hands out session ids: none for a POST (stateless), a
// fresh random one for each GET notification stream.
type streamSessions struct{}

func (streamSessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r != nil && r.Method == http.MethodGet {
		return &streamIDs{}
	}
	return &server.StatelessSessionIdManager{}
}

// streamIDs generates an unguessable id per notification stream.
type streamIDs struct {
	server.StatelessSessionIdManager
}

func (*streamIDs) Generate() string { return "mnemo-stream-" + uuid.NewString() }

// plainHTTPWarning is the warning for serving on bound (host:port)
// without TLS where others can listen: "" on a loopback address, with
// TLS, or behind a TLS-terminating proxy (an https:// public URL).
func plainHTTPWarning(bound string, tls bool, publicURL string) string {
	host := bound
	if h, _, err := net.SplitHostPort(bound); err == nil {
		host = h
	}
	if tls || strings.HasPrefix(publicURL, "https://") || LoopbackHost(host) {
		return ""
	}
	return "serving plain HTTP on " + bound + ", which is not a loopback address: tokens, login cookies and memory travel in clear " +
		"over the network; set tls_cert_file and tls_key_file, or put a TLS-terminating proxy in front and set http_public_url to its https:// URL"
}

// LoginURL is the viewer's login page at the origin of resource (the MCP
// endpoint's URL as clients reach it).
func LoginURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return uiPath + "/login"
	}
	return u.Scheme + "://" + u.Host + uiPath + "/login"
}
