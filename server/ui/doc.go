// Package ui is the memory viewer: a small web application that shows a
// person what mnemo remembers — the profile, facts, exchanges, mid-term
// topic sessions with their heat, fact histories, pending work — and lets
// them correct and forget it, preview what retrieve_memory would inject,
// export and import.
//
// Every read and change goes through the engine.Service methods the MCP
// tools use (Profile, List, Retrieve, SaveFact, UpdateFact, UpdateProfile,
// Forget, FactHistory, MidTerm), so validation, ranking and the fact
// history are the tools' own. The pages are rendered on the server with
// html/template; the assets (one stylesheet, one script, no third-party
// code) are embedded, so the viewer works offline.
//
// Looking is read-only: a preview and a search are retrievals with Peek
// (no visit counted, no analysis started), and no page writes anything.
// Every change is made with memory.ActorViewer in its context, so the fact
// history says the person made it here. A forget answers with its own
// page: what went with it and what may still mention it (profile
// sections, facts and exchanges that hold its words and names, facts drawn
// from the same thread), each with its action.
//
// # Files
//
// ui.go is the handler, its routes and checks; render.go the templates'
// view, the GET and POST plumbing; pages.go the pages; actions.go the
// changes; topic.go the Forget a topic and For developers pages; chart.go
// the SVG charts; login.go the one-time token login of
// "mnemo ui"; templates/ and static/ the embedded assets.
//
// # Mounting
//
// New returns an http.Handler. It does not authenticate by itself: the
// caller of New says who makes a request and which scopes they may see
// through Options.Access, so the same handler serves "mnemo ui" (a
// one-time token exchanged for a session cookie: TokenLogin) and, later,
// the /ui pages of an HTTP server behind its own authentication:
//
//	h, err := ui.New(svc, store, ui.Options{
//		Prefix: "/ui",
//		Access: func(r *http.Request) (ui.Caller, error) {
//			user, session, err := authenticate(r) // the server's own
//			if err != nil {
//				return ui.Caller{}, err
//			}
//			return ui.Caller{
//				Name: user, User: user, Session: session,
//				May:  func(sc memory.Scope) bool { return sc.UserID == user },
//			}, nil
//		},
//		Hosts: []string{"memory.example.org"},
//	})
//	mux.Handle("/ui/", h)
//
// Caller.Session must be a secret that stays the same for one login (a
// session cookie's value, a hash of the bearer token): the CSRF token of
// every form is derived from it and from Options.CSRFKey, which every
// instance behind a load balancer must share so that a form served by one
// is accepted by another.
//
// # Safety
//
// Every response carries a strict Content-Security-Policy (script-src
// 'self', no inline script or style), nosniff, no framing and no-store.
// A request whose Host is not one of Options.Hosts, or whose Origin names
// another host, is refused with 403 (DNS rebinding, cross-site reads);
// without a caller it gets 401 and a page that says how to log in. Every
// state change is a POST that must carry the session's CSRF token and a
// same-host Origin (or Referer); "Origin: null", which a browser sends for
// a form on a no-referrer page, counts only with Sec-Fetch-Site:
// same-origin, a header no page can set. Remembered text is untrusted: it is only
// ever placed in HTML text and attribute contexts by html/template, never
// in a script.
package ui
