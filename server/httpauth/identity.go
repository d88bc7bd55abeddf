// Package httpauth authenticates and guards mnemo's HTTP transport.
//
// It has two ways to know who a request comes from, both as bearer tokens
// (RFC 6750): static tokens kept, hashed, in a TokenStore — the tokens
// file of a data directory (TokenFile, checked by TokenVerifier) or a
// store shared by several instances (checked by StoreVerifier, which
// caches the list and reloads it when told it changed) — and OAuth 2.1
// access tokens, JWTs
// signed by an authorization server and checked against its published keys
// (OAuthVerifier), as the MCP authorization specification asks of a
// resource server. Authenticate turns either into an Identity in the
// request context.
//
// Around it are the guards an HTTP MCP server needs: Host and Origin
// checks against DNS rebinding (CheckHostOrigin), a request size limit
// (LimitBody), per-credential rate limits (RateLimit), an access log that
// never holds a credential (AccessLog), the Protected Resource Metadata
// document (RFC 9728) and health endpoints. A server composes them around
// its MCP handler; see the package example.
package httpauth

import (
	"context"
	"errors"
	"net/http"
)

// Method says how a request was authenticated.
type Method string

// The ways a request is authenticated.
const (
	// MethodToken is a static bearer token from the tokens file.
	MethodToken Method = "token"
	// MethodOAuth is an OAuth access token (a JWT) from the issuer.
	MethodOAuth Method = "oauth"
)

// Identity is who an authenticated request comes from.
type Identity struct {
	// User is the user id memory is kept under; never empty.
	User string
	// Agent, when set, confines the request to that agent's memory.
	Agent string
	// Method is how the request was authenticated.
	Method Method
	// Credential names the credential for logs and rate limits, never the
	// secret: the token id of a static token, or the issuer's subject
	// (and token id, when the JWT has one) of an OAuth token.
	Credential string
	// Scopes are the OAuth scopes granted; nil for a static token.
	Scopes []string
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity Authenticate put in ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Verifier checks a bearer token. Verify returns the identity the token
// stands for, ErrUnrecognized when the token is not of the verifier's kind
// (another verifier may take it), or an *Error saying why the token is
// refused. An error wrapping ErrUnavailable (an *Error of status 503, or
// any other error: a failure of the verifier itself) says that the token
// cannot be checked now — its store or issuer is out of reach — and is
// answered 503 with Retry-After, never as a bad token.
type Verifier interface {
	Verify(ctx context.Context, token string) (Identity, error)
}

// ErrUnrecognized is returned by a Verifier for a token that is not of its
// kind.
var ErrUnrecognized = errors.New("token not recognized")

// ErrUnavailable is wrapped by a Verifier's error when a token cannot be
// checked now (the tokens' store or the issuer out of reach): the token is
// not known to be bad, and the request may be tried again.
var ErrUnavailable = errors.New("credentials cannot be checked now")

// Error is a refused credential: the OAuth error code and description of
// the WWW-Authenticate challenge (RFC 6750 section 3.1) and the status.
type Error struct {
	// Status is the HTTP status: 400, 401 or 403; 503 when the credential
	// cannot be checked now (the error is then ErrUnavailable).
	Status int
	// Code is invalid_request, invalid_token or insufficient_scope.
	Code string
	// Description is a short reason safe to show the client; it never
	// holds the token.
	Description string
	// Scope lists the scopes needed, for insufficient_scope.
	Scope string
	// Err is the underlying cause, for the server's log only.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Description + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Description
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnavailable, for a 503.
func (e *Error) Is(target error) bool {
	return target == ErrUnavailable && e.Status == http.StatusServiceUnavailable
}

// unavailable is the 503 refusal of a credential that cannot be checked
// now.
func unavailable(desc string, err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Description: desc, Err: err}
}

// invalidToken is the 401 invalid_token refusal.
func invalidToken(desc string, err error) *Error {
	return &Error{Status: 401, Code: "invalid_token", Description: desc, Err: err}
}

// Chain returns h wrapped in the middleware, the first outermost:
// Chain(h, a, b) is a(b(h)).
func Chain(h http.Handler, middleware ...func(http.Handler) http.Handler) http.Handler {
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	return h
}
