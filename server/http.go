package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/server/httpauth"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
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

const (
	// defaultHTTPAddr is where serve --http listens without an address.
	defaultHTTPAddr = "127.0.0.1:8787"
	// mcpPath is the MCP endpoint's path.
	mcpPath = "/mcp"
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

// readTimeout is ReadTimeout, or its default when unset.
func (hc HTTPConfig) readTimeout() time.Duration {
	if hc.ReadTimeout <= 0 {
		return defaultHTTPConfig().ReadTimeout
	}
	return hc.ReadTimeout
}

func defaultHTTPConfig() HTTPConfig {
	return HTTPConfig{OAuthUserClaim: "sub", MaxBodyBytes: 4 << 20, ReadTimeout: time.Minute, Rate: 20, Burst: 40}
}

// errNoAuth is the refusal to serve HTTP without a way to authenticate.
const errNoAuth = `refusing to serve HTTP without authentication: no tokens in %s and no oauth_issuer.
Configure one of:
  mnemo token add --user NAME             a bearer token for one user (printed once)
  MNEMO_OAUTH_ISSUER=https://issuer.example.com   accept that issuer's OAuth access tokens
or, on a loopback address only, pass --insecure-no-auth to serve without authentication`

// runServeHTTP is "mnemo serve --http [ADDR]".
func runServeHTTP(ctx context.Context, c *call) int {
	addr := c.args.str("http")
	switch {
	case !c.args.has("http"):
		if len(c.args.positional) > 0 {
			return c.fail(exitUsage, "unexpected argument %q; an address is given only with --http", c.args.positional[0])
		}
		return c.fail(exitUsage, "--insecure-no-auth is only for --http")
	case addr != "" && len(c.args.positional) > 0:
		return c.fail(exitUsage, "unexpected argument %q: the address is already %s", c.args.positional[0], addr)
	case addr == "" && len(c.args.positional) > 0:
		addr = c.args.positional[0]
	case addr == "":
		addr = defaultHTTPAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return c.fail(exitUsage, "--http %q: want HOST:PORT, like %s or 0.0.0.0:8787", addr, defaultHTTPAddr)
	}
	insecure := c.args.flag("insecure-no-auth")
	if insecure && !loopbackHost(host) {
		return c.fail(exitUsage, "--insecure-no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not %q: anyone who can reach it could read and change every user's memory; create a token with 'mnemo token add --user NAME' instead", addr)
	}
	hc := c.cfg.HTTP
	if (hc.TLSCertFile == "") != (hc.TLSKeyFile == "") {
		return c.fail(exitUsage, "TLS needs both tls_cert_file and tls_key_file; only one is set")
	}
	if !insecure && hc.OAuthIssuer == "" && c.cfg.Storage == "" {
		// The database's tokens are counted once it is open (serveHTTP).
		tokensPath := filepath.Join(c.cfg.DataDir, httpauth.TokensFileName)
		toks, err := httpauth.NewTokenFile(tokensPath).List()
		if err != nil {
			return c.fail(exitUsage, "%v", err)
		}
		if len(toks) == 0 {
			return c.fail(exitUsage, errNoAuth, tokensPath)
		}
	}
	lowGC := c.getenv("GOGC") == ""
	err = serveHTTP(ctx, c.cfg, httpOptions{addr: addr, insecure: insecure, lowGC: lowGC}, c.stderr, c.log)
	var refused startRefusal
	if errors.As(err, &refused) {
		return c.fail(exitUsage, "%s", refused.msg)
	}
	if err != nil {
		c.log.Error("mnemo serve --http failed", "err", err)
		return exitError
	}
	return exitOK
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpOptions are serve --http's per-invocation choices.
type httpOptions struct {
	addr     string
	insecure bool
	lowGC    bool
	// tokens checks the static tokens (where names them); set by
	// serveHTTP once the store is open.
	tokens httpauth.Verifier
	where  string
}

// startRefusal is a reason not to start that the person can fix.
type startRefusal struct{ msg string }

func (r startRefusal) Error() string { return r.msg }

// announcer writes the line that tells people and scripts where the
// server listens.
type announcer interface{ Write([]byte) (int, error) }

// serveHTTP serves MCP over HTTP on opts.addr until ctx is cancelled
// (SIGINT/SIGTERM), then shuts down: it stops accepting, ends the
// notification streams, lets in-flight calls finish and runs pending
// memory updates, each within shutdown_grace.
func serveHTTP(ctx context.Context, cfg *Config, opts httpOptions, stderr announcer, log *slog.Logger) (err error) {
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
	endpoint := scheme + "://" + bound + mcpPath
	resource := endpoint
	if hc.PublicURL != "" {
		resource = hc.PublicURL
	}

	// The memory service's records also go to the clients that may see
	// them (tools/logging.go); the HTTP layer's (access log, auth) and the
	// store's (they name the database: its host, role and name) only to
	// stderr.
	clientLog := tools.NewClientLog(log.Handler())
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	var watchTokens func(context.Context)
	opts.tokens, opts.where, watchTokens = tokenVerifier(cfg, store)
	if _, shared := store.(*postgres.Store); shared && !opts.insecure && hc.OAuthIssuer == "" {
		ts, _ := tokenStore(cfg, store)
		toks, err := ts.Tokens(ctx)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			return startRefusal{fmt.Sprintf(errNoAuth, opts.where)}
		}
	}
	key, err := uiKey(ctx, cfg, store)
	if err != nil {
		return err
	}
	built := make(chan struct{})
	svc, err := openService(cfg, store, slog.New(clientLog), withModels, built)
	if err != nil {
		close(built)
		return err
	}
	// The forget question's answers are signed with a key every instance
	// shares (derived from the viewer's), so any instance takes them.
	confirmKey := hmac.New(sha256.New, key)
	confirmKey.Write([]byte("mnemo forget_memory confirm key"))
	opt := []tools.Option{tools.WithLLMConfigured(cfg.LLM.Configured()), tools.WithClientLog(clientLog), tools.WithStatelessHTTP(),
		tools.WithConfirmKey(confirmKey.Sum(nil))}
	if opts.insecure {
		opt = append(opt, tools.WithDefaultUser(cfg.Memory.UserID))
	} else {
		opt = append(opt, tools.WithAuthenticatedCallers())
	}
	mcpServer := tools.NewServer(svc, version(), opt...)
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

	stopStart := startService(ctx, svc, log, opts.lowGC, nil)
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
		fmt.Fprintf(stderr, "mnemo: memory viewer: log in at %s with a token (mnemo token add --user NAME)\n", loginURL(resource))
	}
	fmt.Fprintf(stderr, "mnemo: listening on %s\n", endpoint)
	log.Info("serving MCP over HTTP",
		"version", version(), "url", endpoint, "resource", resource, "data_dir", cfg.DataDir,
		"auth", handler.authText, "llm", llmState(cfg))

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
// serveGCPercent once the scope is loaded. The returned func stops both
// and waits.
func startService(ctx context.Context, svc *engine.Service, log *slog.Logger, lowGC bool, after <-chan struct{}) func() {
	startCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
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
			debug.SetGCPercent(serveGCPercent)
		}
		if err := svc.Start(startCtx); err != nil && startCtx.Err() == nil {
			log.Error("cannot resume pending memory updates", "err", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// httpStack is the composed HTTP handler and what shutdown needs of it.
type httpStack struct {
	streamable *server.StreamableHTTPServer
	handler    func(ready func(context.Context) error) http.Handler
	authText   string // how requests are authenticated, for the log
}

// httpHandler composes the guards around the MCP endpoint:
//
//	AccessLog → BodyDeadline → /healthz, /readyz (unguarded: load balancers probe by address)
//	                         → CheckHostOrigin → Protected Resource Metadata
//	                                           → /mcp: Authenticate → caller → RateLimit → LimitBody → MCP
//	                                           → /ui (mount)
//
// Every request's body has http_read_timeout to arrive, whatever its
// route; past it the connection is closed. Nothing of a body on /mcp is
// read before its sender is authenticated and within their rate; then it
// is counted against http_max_body_bytes as it is read.
//
// mount, when not nil, adds more pages to the guarded mux (the viewer
// under /ui), given the verifiers of /mcp (none with --insecure-no-auth).
func httpHandler(mcpServer *server.MCPServer, cfg *Config, opts httpOptions, bound, resource string, log *slog.Logger,
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
	guardedMCP = append(guardedMCP, httpauth.RateLimit(httpauth.RateOptions{Rate: hc.Rate, Burst: hc.Burst}),
		httpauth.LimitBody(hc.MaxBodyBytes))

	var publicURLs []string
	if hc.PublicURL != "" {
		publicURLs = []string{hc.PublicURL}
	}
	origins, err := httpauth.AllowedOrigins(bound, publicURLs, hc.AllowedHosts)
	if err != nil {
		return nil, err
	}
	origins.Setting = "the http_allowed_hosts setting (or make it http_public_url)"
	proxies, err := httpauth.ParseTrustedProxies(hc.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("setting trusted_proxies: %w", err)
	}
	guarded := http.NewServeMux()
	if !opts.insecure {
		md := httpauth.MetadataHandler(httpauth.ResourceMetadata{
			Resource: resource, AuthorizationServers: authServers,
			ScopesSupported: strings.Fields(hc.OAuthScope), ResourceName: "mnemo memory"})
		guarded.Handle(httpauth.MetadataPath, md)
		if p := resourcePath(resource); p != "" && p != "/" {
			guarded.Handle(httpauth.MetadataPath+p, md)
		}
	}
	guarded.Handle(mcpPath, httpauth.Chain(streamable, guardedMCP...))
	if mount != nil {
		if err := mount(guarded, verifiers); err != nil {
			return nil, err
		}
	}
	st.handler = func(ready func(context.Context) error) http.Handler {
		root := http.NewServeMux()
		root.Handle("/healthz", httpauth.Healthz())
		root.Handle("/readyz", httpauth.Readyz(ready, log))
		root.Handle("/", httpauth.CheckHostOrigin(origins)(guarded))
		return httpauth.Chain(root, httpauth.ClientAddresses(proxies), httpauth.AccessLog(log), httpauth.BodyDeadline(hc.readTimeout()))
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
	if tls || strings.HasPrefix(publicURL, "https://") || loopbackHost(host) {
		return ""
	}
	return "serving plain HTTP on " + bound + ", which is not a loopback address: tokens, login cookies and memory travel in clear " +
		"over the network; set tls_cert_file and tls_key_file, or put a TLS-terminating proxy in front and set http_public_url to its https:// URL"
}

// loginURL is the viewer's login page at the origin of resource (the MCP
// endpoint's URL as clients reach it).
func loginURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return uiPath + "/login"
	}
	return u.Scheme + "://" + u.Host + uiPath + "/login"
}
