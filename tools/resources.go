package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
// every client, and registers the scope's URIs as resources the first
// time it changes, which sends notifications/resources/list_changed.

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

// addResources registers the resources and templates over m and, when m
// reports changes, the notifications.
func addResources(s *server.MCPServer, m Memory, defaultUser string) {
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
	n := &notifier{srv: s, m: m, defaultUser: defaultUser, seen: map[memory.Scope]bool{}}
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

// notifier turns memory changes into resource notifications.
type notifier struct {
	srv         *server.MCPServer
	m           Memory
	defaultUser string

	mu   sync.Mutex
	seen map[memory.Scope]bool
}

func (n *notifier) changed(sc memory.Scope) {
	n.mu.Lock()
	first := !n.seen[sc]
	n.seen[sc] = true
	n.mu.Unlock()
	uris := scopeURIs(sc)
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
