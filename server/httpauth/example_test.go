package httpauth_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-mcp/mnemo/server/httpauth"
)

// Example composes the guards around an MCP handler the way `mnemo serve
// --http` should: health endpoints first (load balancers probe them by
// address), then Host/Origin checks, the public metadata document, and
// the MCP endpoint behind the size limit, authentication and rate limit.
// Behind it, the MCP server's context function turns the Identity into
// the tools' caller:
//
//	server.NewStreamableHTTPServer(mcpServer, server.WithStateLess(true),
//		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
//			if id, ok := httpauth.IdentityFrom(ctx); ok {
//				ctx = tools.WithCaller(ctx, tools.Caller{User: id.User, Agent: id.Agent})
//			}
//			return ctx
//		}))
func Example() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	listen := "127.0.0.1:8787"
	resource := "http://127.0.0.1:8787/mcp" // the public URL, when behind a proxy
	var mcpHandler http.Handler = http.NotFoundHandler()

	tokens := httpauth.NewTokenVerifier(filepath.Join("/var/lib/mnemo", httpauth.TokensFileName))
	verifiers := []httpauth.Verifier{tokens}
	if issuer := ""; issuer != "" { // configured: add the OAuth verifier
		oauth, err := httpauth.NewOAuthVerifier(httpauth.OAuthConfig{Issuer: issuer, Resource: resource, RequiredScopes: []string{"mnemo"}})
		if err != nil {
			logger.Error("oauth", "err", err)
			return
		}
		verifiers = append(verifiers, oauth)
	}
	metadataURL, err := httpauth.MetadataURL(resource)
	if err != nil {
		logger.Error("resource", "err", err)
		return
	}
	authenticate, err := httpauth.Authenticate(httpauth.AuthOptions{Verifiers: verifiers, ResourceMetadataURL: metadataURL, Logger: logger})
	if err != nil {
		logger.Error("no authentication", "err", err)
		return
	}
	origins, err := httpauth.AllowedOrigins(listen, []string{resource}, nil)
	if err != nil {
		logger.Error("origins", "err", err)
		return
	}

	guarded := http.NewServeMux()
	metadata := httpauth.MetadataHandler(httpauth.ResourceMetadata{Resource: resource})
	guarded.Handle(httpauth.MetadataPath, metadata)
	guarded.Handle(httpauth.MetadataPath+"/mcp", metadata)
	// No body is read before its sender is authenticated.
	guarded.Handle("/mcp", httpauth.Chain(mcpHandler,
		authenticate,
		httpauth.RateLimit(httpauth.RateOptions{Rate: 20, Burst: 40}),
		httpauth.BodyDeadline(time.Minute),
		httpauth.LimitBody(4<<20)))

	root := http.NewServeMux()
	root.Handle("/healthz", httpauth.Healthz())
	root.Handle("/readyz", httpauth.Readyz(func(context.Context) error { return nil }, logger))
	root.Handle("/", httpauth.CheckHostOrigin(origins)(guarded))

	srv := &http.Server{Addr: listen, Handler: httpauth.AccessLog(logger)(root), ReadHeaderTimeout: 10 * time.Second}
	_ = srv // srv.ListenAndServe() or ListenAndServeTLS(cert, key)
}
