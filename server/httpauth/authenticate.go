package httpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MetadataPath is where Protected Resource Metadata is served (RFC 9728).
const MetadataPath = "/.well-known/oauth-protected-resource"

// errMalformed is a present but unusable Authorization header.
var errMalformed = errors.New("malformed Authorization header")

// ParseBearer returns the token of an Authorization header value in the
// form "Bearer <token>" (RFC 6750 section 2.1; the scheme in any case).
// It returns "" and no error for an empty header or another scheme, and
// an error for a Bearer header whose token is missing or holds characters
// a token cannot (b64token: letters, digits, - . _ ~ + / and trailing =).
func ParseBearer(header string) (string, error) {
	if header == "" {
		return "", nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", nil
	}
	token = strings.TrimLeft(token, " ")
	if !ok || token == "" {
		return "", errMalformed
	}
	end := len(token)
	for end > 0 && token[end-1] == '=' {
		end--
	}
	if end == 0 || len(token) > 16<<10 {
		return "", errMalformed
	}
	for i := range end {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return "", errMalformed
		}
	}
	return token, nil
}

// AuthOptions configures Authenticate.
type AuthOptions struct {
	// Verifiers check a token in order; the first that recognizes it
	// decides. At least one is required.
	Verifiers []Verifier
	// ResourceMetadataURL is the absolute URL of this server's Protected
	// Resource Metadata, named in every challenge so that an OAuth client
	// can find the authorization server; see MetadataURL.
	ResourceMetadataURL string
	// Scope, when set, is named in challenges as the scope to ask for.
	Scope string
	// Logger receives refused credentials (never the token); default
	// slog.Default().
	Logger *slog.Logger
	// Recheck, when positive, is how often the credential of a request
	// that stays open (a GET notification stream, a subscriptions/listen
	// POST, a long call) is checked again: once it is refused (revoked,
	// expired), the request's context is cancelled, which ends it.
	Recheck time.Duration
}

// Authenticate returns middleware that lets through only requests with a
// valid bearer token, with the Identity in their context (IdentityFrom).
// Otherwise it answers, with a WWW-Authenticate: Bearer challenge naming
// resource_metadata:
//
//	401                     no token (or another scheme)
//	400 invalid_request     a malformed Authorization header, or several
//	401 invalid_token       a token no verifier accepts: unknown,
//	                        revoked, expired, not yet valid, from another
//	                        issuer or for another audience, badly signed
//	403 insufficient_scope  a valid OAuth token without the required scope
//	503                     the token cannot be checked now (the tokens'
//	                        store or the issuer out of reach), with
//	                        Retry-After and no challenge: it is not bad
//
// A token in the query string is not looked at (the MCP authorization
// specification forbids it).
func Authenticate(opts AuthOptions) (func(http.Handler) http.Handler, error) {
	if len(opts.Verifiers) == 0 {
		return nil, errors.New("authenticate: no authentication method is configured")
	}
	if opts.ResourceMetadataURL == "" {
		return nil, errors.New("authenticate: the resource metadata URL is not set")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, aerr := authenticate(r, opts)
			if aerr != nil {
				if aerr.Status == http.StatusServiceUnavailable {
					opts.Logger.WarnContext(r.Context(), "request refused: credentials cannot be checked now", "path", r.URL.Path, "reason", aerr.Description, "err", aerr.Err)
				} else if aerr.Status != http.StatusUnauthorized || aerr.Code != "" {
					attrs := []any{"path", r.URL.Path, "code", aerr.Code, "reason", aerr.Description}
					if aerr.Err != nil {
						attrs = append(attrs, "err", aerr.Err)
					}
					opts.Logger.InfoContext(r.Context(), "request refused", attrs...)
				}
				dropBody(w, r)
				challenge(w, opts, aerr)
				return
			}
			noteIdentity(r.Context(), id)
			ctx := WithIdentity(r.Context(), id)
			if opts.Recheck > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go recheck(ctx, cancel, r, opts)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}, nil
}

// recheck checks r's credential every opts.Recheck until ctx ends, and
// cancels it when the credential is refused. A check that cannot be made
// (an issuer out of reach) keeps the request open.
func recheck(ctx context.Context, cancel context.CancelFunc, r *http.Request, opts AuthOptions) {
	t := time.NewTicker(opts.Recheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, aerr := authenticate(r.WithContext(ctx), opts)
		if aerr != nil && !uncheckable(aerr) && ctx.Err() == nil {
			opts.Logger.InfoContext(ctx, "stream closed: credential refused", "path", r.URL.Path, "code", aerr.Code, "reason", aerr.Description)
			cancel()
			return
		}
	}
}

// uncheckable reports whether a refusal says only that the credential
// could not be checked now (its store or issuer out of reach), not that
// it is bad.
func uncheckable(e *Error) bool { return errors.Is(e, ErrUnavailable) }

// authenticate finds and checks the request's token.
func authenticate(r *http.Request, opts AuthOptions) (Identity, *Error) {
	headers := r.Header.Values("Authorization")
	if len(headers) > 1 {
		return Identity{}, &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "more than one Authorization header"}
	}
	var header string
	if len(headers) == 1 {
		header = headers[0]
	}
	token, err := ParseBearer(header)
	if err != nil {
		return Identity{}, &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "malformed bearer token"}
	}
	if token == "" {
		return Identity{}, &Error{Status: http.StatusUnauthorized}
	}
	for _, v := range opts.Verifiers {
		id, err := v.Verify(r.Context(), token)
		if errors.Is(err, ErrUnrecognized) {
			continue
		}
		var aerr *Error
		switch {
		case errors.As(err, &aerr):
			return Identity{}, aerr
		case err != nil:
			return Identity{}, unavailable("the token cannot be checked now", err)
		}
		return id, nil
	}
	return Identity{}, invalidToken("unknown token", nil)
}

// RetryUnavailable is the Retry-After of a 503 for credentials that
// cannot be checked now.
const RetryUnavailable = 5 * time.Second

// UnavailableMessage is what a client is told when its credentials
// cannot be checked now.
const UnavailableMessage = "memory is temporarily unavailable; nothing was changed"

// challenge writes the refusal with its WWW-Authenticate header; a 503
// gets Retry-After instead: the credential is not bad, and a client must
// not be sent to sign in again.
func challenge(w http.ResponseWriter, opts AuthOptions, e *Error) {
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryUnavailable.Seconds())))
		http.Error(w, UnavailableMessage+" ("+e.Description+"); retry after the time in Retry-After", e.Status)
		return
	}
	params := []string{}
	if e.Code != "" {
		params = append(params, fmt.Sprintf("error=%q", e.Code))
		if e.Description != "" {
			params = append(params, fmt.Sprintf("error_description=%q", e.Description))
		}
	}
	scope := e.Scope
	if scope == "" {
		scope = opts.Scope
	}
	if scope != "" {
		params = append(params, fmt.Sprintf("scope=%q", scope))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", opts.ResourceMetadataURL))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	msg := e.Description
	if msg == "" {
		msg = "authentication required: send Authorization: Bearer <token>"
	}
	http.Error(w, msg, e.Status)
}

// MetadataURL returns the URL of the Protected Resource Metadata of
// resource (this server's resource URL, e.g. https://host/mcp): the
// well-known path at the resource's origin, where Handler serves it.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("resource URL %q: want an absolute http or https URL", resource)
	}
	return u.Scheme + "://" + u.Host + MetadataPath, nil
}

// ResourceMetadata is the Protected Resource Metadata document (RFC 9728
// section 2).
type ResourceMetadata struct {
	// Resource is this server's resource URL; required.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens are accepted.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes a client may ask for.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is always ["header"].
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitempty"`
}

// MetadataHandler serves md as JSON to GET and HEAD, readable from any
// origin (the document is public). Mount it at MetadataPath and at
// MetadataPath followed by the resource URL's path (RFC 9728 section 3.1),
// outside Authenticate.
func MetadataHandler(md ResourceMetadata) http.Handler {
	md.BearerMethodsSupported = []string{"header"}
	body, _ := json.MarshalIndent(md, "", "  ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "max-age=300")
		w.Write(body)
	})
}
