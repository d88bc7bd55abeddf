// Package server is mnemo's transports: MCP over stdio (what a host
// starts) and over Streamable HTTP (serve --http), with the stdio guard,
// authentication (package httpauth), what instances of a team share and
// the memory viewer's mount. It serves a memory/engine Service through
// package tools; the command line fills its Config (what it reads of the
// settings and how to open the store and the service) and calls Stdio or
// HTTP.
//
// Every route of serve --http passes one middleware chain (chain.go):
// the client's address, the access log, the body's deadline, the Host and
// Origin check and the body limit. A new route is a line of httpHandler's
// mux (http.go) and gets them all; what it adds of its own
// (authentication, a rate) is composed on the route after the chain.
//
// Files:
//
//	server.go       Config: the settings served and the ways to open the store, the service and the viewer
//	stdio.go        Stdio: MCP on stdin/stdout until stdin closes or the context ends
//	stdio_guard.go  the guard between stdin and the MCP server (line limit, ids, initialize first)
//	stdio_conn.go   the stdio transport: one decode per line, requests served on the reading goroutine, the session
//	http.go         HTTP: listen, TLS, the routes (httpHandler), streams and shutdown
//	chain.go        the one middleware chain every HTTP route passes
//	viewer.go       the viewer under /ui: its login form, log-out and mount
//	team.go         what instances share: the token store and the viewer's key (PostgreSQL or data dir)
//	gcpace.go       paceGC: the GC percent of serve, with a least growth between collections for a small heap
//
// Subpackages: httpauth (bearer tokens, OAuth, the guards the chain is
// made of) and ui (the memory viewer's pages, mounted here and by mnemo ui).
package server
