package server

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mnemo-mcp/mnemo/server/httpauth"
)

// The probes' paths: load balancers ask them by address, so they are
// answered whatever the Host header says.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// chain is the one middleware chain every route of serve --http passes,
// outermost first, whatever its path (the MCP endpoint, the viewer and
// its login form, the metadata document, the probes, a 404):
//
//	ClientAddresses → AccessLog → BodyDeadline → CheckHostOrigin → LimitBody → the route
//
// The client's address is the one a trusted proxy reports (rate limits
// and the access log use it); every request is logged once; its body has
// http_read_timeout to arrive (then the connection is closed) and is
// counted against http_max_body_bytes as it is read (413 past it, and at
// once for a declared length over it); Host and Origin must name this
// server (not checked for the probes). None of these reads a body, so a
// route's authentication still runs before any of it is read. What a
// route adds (authentication, its rate) follows the chain, on the route.
// A new route is added to the mux in httpHandler and so gets all of it.
func chain(hc HTTPConfig, bound string, log *slog.Logger) ([]func(http.Handler) http.Handler, error) {
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
	return []func(http.Handler) http.Handler{
		httpauth.ClientAddresses(proxies),
		httpauth.AccessLog(log),
		httpauth.BodyDeadline(hc.readTimeout()),
		exceptProbes(httpauth.CheckHostOrigin(origins)),
		httpauth.LimitBody(hc.MaxBodyBytes),
	}, nil
}

// exceptProbes applies guard to every request but the probes'.
func exceptProbes(guard func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		guarded := guard(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == healthzPath || r.URL.Path == readyzPath {
				next.ServeHTTP(w, r)
				return
			}
			guarded.ServeHTTP(w, r)
		})
	}
}
