package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Resources: the long-term memory of a scope as documents a host can read
// or show, without a tool call.
//
//	mnemo://memory/profile.json                        the configured user's profile (JSON)
//	mnemo://memory/profile.md                          the same as markdown
//	mnemo://memory/facts.json                          the configured user's facts (JSON)
//	mnemo://memory/{user_id}/profile.json|md, facts.json               any user's shared memory
//	mnemo://memory/{user_id}/{agent_name}/profile.json|md, facts.json  one agent's memory of a user
//
// When memory changes (a fact saved, updated or forgotten, an updater run)
// the server sends notifications/resources/updated for the scope's URIs to
// every client (for clients of protocol 2026-07-28: to the
// subscriptions/listen streams that name the URI, listen.go), and
// registers the scope's URIs as resources the first
// time it changes, which sends notifications/resources/list_changed.
//
// With a caller (an authenticated HTTP request, caller.go) the documents
// without a user_id are the caller's own, a URI naming another user is
// refused, and resources/list shows only the caller's scopes. Under
// WithAuthenticatedCallers, notifications/resources/updated goes only to
// the notification streams (HTTP GET) of callers who may read the scope;
// notifications/resources/list_changed, which names no scope, still goes
// to every stream.

// resourceRoot is the prefix of every mnemo resource URI.
const resourceRoot = "mnemo://memory/"

// memoryDoc is one document kind a scope is readable as.
type memoryDoc struct {
	name   string // last URI segment
	title  string
	mime   string
	desc   string
	render func(*memory.ProfileResult) (string, error)
}

var memoryDocs = []memoryDoc{
	{"profile.json", "Memory profile (JSON)", "application/json",
		"Everything long-term memory holds about the user: profile and history summaries, facts, knowledge lists, stored and pending exchange counts.",
		profileJSON},
	{"profile.md", "Memory profile", "text/markdown",
		"What memory holds about the user, as a readable document: summaries, then facts by category with their ids and confidence.",
		profileMarkdown},
	{"facts.json", "Remembered facts (JSON)", "application/json",
		"The facts remembered about the user, with id, category, confidence, creation time and source.",
		factsJSON},
}

// addResources registers the resources and templates over m, the listing
// filter on hooks and, when m reports changes, the notifications.
func addResources(s *server.MCPServer, m Memory, cfg config, hooks *server.Hooks) {
	defaultUser := cfg.defaultUser
	for _, d := range memoryDocs {
		s.AddResource(mcp.NewResource(resourceRoot+d.name, d.title,
			mcp.WithResourceDescription(d.desc+" For the configured user's shared memory."),
			mcp.WithMIMEType(d.mime)),
			readMemoryDoc(m, d, memory.Scope{}))
		s.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+"{user_id}/"+d.name, d.title+" of a user",
			mcp.WithTemplateDescription(d.desc+" For the shared memory of user_id."),
			mcp.WithTemplateMIMEType(d.mime)),
			server.ResourceTemplateHandlerFunc(readMemoryDoc(m, d, memory.Scope{})))
		s.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+"{user_id}/{agent_name}/"+d.name, d.title+" of an agent",
			mcp.WithTemplateDescription(d.desc+" For agent_name's own memory of user_id."),
			mcp.WithTemplateMIMEType(d.mime)),
			server.ResourceTemplateHandlerFunc(readMemoryDoc(m, d, memory.Scope{})))
	}
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if c, ok := CallerFrom(ctx); ok && res != nil {
			res.Resources = slices.DeleteFunc(res.Resources, func(r mcp.Resource) bool { return !c.lists(r.URI) })
		}
	})
	var streams *callerStreams
	if cfg.authenticated {
		streams = &callerStreams{m: map[string]Caller{}}
		hooks.AddOnRegisterSession(func(ctx context.Context, session server.ClientSession) {
			if c, ok := CallerFrom(ctx); ok {
				streams.add(session.SessionID(), c)
			}
		})
		hooks.AddOnUnregisterSession(func(_ context.Context, session server.ClientSession) {
			streams.remove(session.SessionID())
		})
	}
	listens := &listenStreams{m: map[server.ClientSession]listener{}}
	listens.track(hooks)
	hook, ok := m.(interface{ OnChange(func(memory.Scope)) })
	if !ok {
		return
	}
	if defaultUser == "" {
		defaultUser = memory.DefaultUserID
		if c, ok := m.(interface{ Config() memory.Config }); ok && c.Config().UserID != "" {
			defaultUser = c.Config().UserID
		}
	}
	n := &notifier{srv: s, m: m, defaultUser: defaultUser, streams: streams, listens: listens, authenticated: cfg.authenticated, seen: map[memory.Scope]bool{}}
	hook.OnChange(n.changed)
}

// readMemoryDoc reads document d of the scope named by the template
// arguments, or of fixed when the URI has none. With a caller in the
// context (caller.go) the scope is the caller's, and a URI naming another
// user's memory is refused.
func readMemoryDoc(m Memory, d memoryDoc, fixed memory.Scope) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		scope := fixed
		if v, ok := req.Params.Arguments["user_id"]; ok {
			scope.UserID = argString(v)
			if scope.UserID == "" {
				return nil, fmt.Errorf("resource %s: user_id is empty; use mnemo://memory/%s for the configured user", req.Params.URI, d.name)
			}
		}
		if v, ok := req.Params.Arguments["agent_name"]; ok {
			scope.AgentName = argString(v)
		}
		if c, ok := CallerFrom(ctx); ok {
			var msg string
			if scope, msg = c.confine(scope.UserID, scope.AgentName); msg != "" {
				return nil, fmt.Errorf("resource %s: not allowed: %s", req.Params.URI, msg)
			}
		}
		res, err := m.Profile(ctx, memory.ProfileRequest{UserID: scope.UserID, AgentName: scope.AgentName, IncludeKnowledge: true, IncludeAssistantKnowledge: true})
		if err != nil {
			return nil, resourceError(ctx, req.Params.URI, err)
		}
		text, err := d.render(res)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", req.Params.URI, err)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: d.mime, Text: text}}, nil
	}
}

// argString returns a URI template variable's value.
func argString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []string:
		return strings.Join(x, ",")
	}
	return fmt.Sprint(v)
}

// resourceError is the JSON-RPC error of a failed resource read: the
// message for an input error, a generic one (logged) for the rest.
func resourceError(ctx context.Context, uri string, err error) error {
	var in *memory.InputError
	if errors.As(err, &in) {
		return fmt.Errorf("resource %s: invalid %s", uri, in.Error())
	}
	slog.ErrorContext(ctx, "resource read failed", "uri", uri, "err", err)
	return fmt.Errorf("resource %s: memory is unavailable (details are in the server log)", uri)
}

// scopeURIs are the resource URIs of a scope.
func scopeURIs(sc memory.Scope) []string {
	base := resourceRoot + sc.UserID + "/"
	if sc.AgentName != "" {
		base += sc.AgentName + "/"
	}
	out := make([]string, len(memoryDocs))
	for i, d := range memoryDocs {
		out[i] = base + d.name
	}
	return out
}

// scopeOfURI is the scope a per-scope resource URI names, and false for
// any other URI (the fixed documents, which read the default scope).
func scopeOfURI(uri string) (memory.Scope, bool) {
	rest, ok := strings.CutPrefix(uri, resourceRoot)
	if !ok {
		return memory.Scope{}, false
	}
	parts := strings.Split(rest, "/")
	switch len(parts) {
	case 2:
		return memory.Scope{UserID: parts[0]}, true
	case 3:
		return memory.Scope{UserID: parts[0], AgentName: parts[1]}, true
	}
	return memory.Scope{}, false
}

// reads reports whether c may read scope sc: its user's, and only its
// agent's when c is bound to one.
func (c Caller) reads(sc memory.Scope) bool {
	return c.User != "" && sc.UserID == c.User && (c.Agent == "" || sc.AgentName == c.Agent)
}

// lists reports whether resources/list shows c the resource at uri: a
// fixed document (which reads c's own memory) or one of c's scopes.
func (c Caller) lists(uri string) bool {
	sc, ok := scopeOfURI(uri)
	return !ok || c.reads(sc)
}

// callerStreams are the open notification streams (sessions registered
// by an HTTP GET) and the caller of each.
type callerStreams struct {
	mu sync.Mutex
	m  map[string]Caller
}

func (s *callerStreams) add(id string, c Caller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = c
}

func (s *callerStreams) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// readers returns the sessions whose caller may read sc, and for each
// whether sc is the caller's own default scope (the fixed documents).
func (s *callerStreams) readers(sc memory.Scope) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for id, c := range s.m {
		if c.reads(sc) {
			out[id] = sc == memory.Scope{UserID: c.User, AgentName: c.Agent}
		}
	}
	return out
}

// notifier turns memory changes into resource notifications.
type notifier struct {
	srv         *server.MCPServer
	m           Memory
	defaultUser string
	// streams, when set, confine notifications to the callers who may
	// read the scope (WithAuthenticatedCallers).
	streams *callerStreams
	// listens are the subscriptions/listen streams (listen.go).
	listens       *listenStreams
	authenticated bool

	mu   sync.Mutex
	seen map[memory.Scope]bool
}

func (n *notifier) changed(sc memory.Scope) {
	n.mu.Lock()
	first := !n.seen[sc]
	n.seen[sc] = true
	n.mu.Unlock()
	uris := scopeURIs(sc)
	n.listens.send(sc, n.authenticated, n.defaultUser)
	if first {
		res := make([]server.ServerResource, len(memoryDocs))
		for i, d := range memoryDocs {
			res[i] = server.ServerResource{
				Resource: mcp.NewResource(uris[i], d.title+" of "+sc.Key(), mcp.WithResourceDescription(d.desc), mcp.WithMIMEType(d.mime)),
				Handler:  readMemoryDoc(n.m, d, sc),
			}
		}
		n.srv.AddResources(res...) // sends notifications/resources/list_changed
	}
	if n.streams != nil {
		for id, own := range n.streams.readers(sc) {
			send := uris
			if own {
				for _, d := range memoryDocs {
					send = append(slices.Clip(send), resourceRoot+d.name)
				}
			}
			for _, uri := range send {
				// A stream that has gone away or is full misses the
				// notification; the client reads the resource again.
				_ = n.srv.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
			}
		}
		return
	}
	if sc.AgentName == "" && sc.UserID == n.defaultUser {
		for _, d := range memoryDocs {
			uris = append(uris, resourceRoot+d.name)
		}
	}
	for _, uri := range uris {
		n.srv.SendNotificationToAllClients(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
	}
}

func profileJSON(r *memory.ProfileResult) (string, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	return string(b), err
}

func factsJSON(r *memory.ProfileResult) (string, error) {
	b, err := json.MarshalIndent(struct {
		Scope memory.Scope  `json:"scope"`
		Facts []memory.Fact `json:"facts"`
	}{r.Scope, r.Facts}, "", "  ")
	return string(b), err
}

// sectionTitles are the headings of the profile sections in markdown.
var sectionTitles = map[string]string{
	"workContext": "Work", "personalContext": "Personal", "topOfMind": "Top of mind",
	"recentMonths": "Recent months", "earlierContext": "Earlier", "longTermBackground": "Long-term background",
}

// profileMarkdown renders the profile as a document for people.
func profileMarkdown(r *memory.ProfileResult) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Memory of %s\n\n", scopeText(r.Scope))
	if r.LastUpdated != "" {
		fmt.Fprintf(&b, "Last updated %s. ", r.LastUpdated)
	}
	fmt.Fprintf(&b, "%s stored, %d pending.\n", count(r.StoredTurns, "exchange"), r.Pending.Turns)
	if r.Empty {
		b.WriteString("\nNothing has been learned yet.\n")
		return b.String(), nil
	}
	doc := memory.Document{User: r.User, History: r.History}
	wrote := false
	for _, s := range doc.Sections() {
		if s.Section.Summary == "" {
			continue
		}
		if !wrote {
			b.WriteString("\n## Profile\n")
			wrote = true
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n", sectionTitles[s.Name], s.Section.Summary)
	}
	writeFacts(&b, "Facts", r.Facts, true)
	writeFacts(&b, "Knowledge about the user", r.Knowledge, false)
	writeFacts(&b, "What the assistant said or committed to", r.AssistantKnowledge, false)
	return b.String(), nil
}

// writeFacts writes a fact list, grouped by category when byCategory.
func writeFacts(b *strings.Builder, title string, facts []memory.Fact, byCategory bool) {
	if len(facts) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n", title)
	line := func(f memory.Fact) {
		fmt.Fprintf(b, "- %s _(%s, confidence %.2g, from %s)_\n", strings.Join(strings.Fields(f.Content), " "), f.ID, f.Confidence, f.Source)
	}
	if !byCategory {
		b.WriteString("\n")
		for _, f := range facts {
			line(f)
		}
		return
	}
	for _, cat := range memory.Categories {
		header := false
		for _, f := range facts {
			if f.Category != cat {
				continue
			}
			if !header {
				fmt.Fprintf(b, "\n### %s\n\n", cat)
				header = true
			}
			line(f)
		}
	}
}
