package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The memory view: an MCP App (extension io.modelcontextprotocol/ui,
// SEP-1865, 2026-01-26). A host that declares the extension gets the
// show_memory tool, which names the view in _meta.ui.resourceUri, and
// the view itself as the ui:// resource viewURI: one HTML document with
// its script and style inline (app/memory.html), that asks for no
// network and no outside resource. The view renders show_memory's
// structured result and changes memory only by calling mnemo's own tools
// through the host (update_memory, forget_memory, restore_memory), so
// every rule of those tools holds for it; it marks those calls with
// viewMetaKey, and a change so marked, from a client that declared the
// extension, is recorded in the history as the person's.
//
// A client that does not declare the extension sees none of it: no
// show_memory, no _meta.ui, no ui:// resource in resources/list, and no
// extension in the server's capabilities.

const (
	// uiExtension is the MCP Apps extension's identifier.
	uiExtension = "io.modelcontextprotocol/ui"
	// appMIMEType is the MIME type of an MCP App's HTML document.
	appMIMEType = "text/html;profile=mcp-app"
	// viewURI is the memory view's resource.
	viewURI = "ui://mnemo/memory"
	// viewMetaKey marks, in a tools/call's _meta, a call the memory view
	// makes for the person using it.
	viewMetaKey = "io.github.mnemo-mcp/view"
)

//go:embed app/memory.html
var viewSource string

// viewHTML is the view's document with its Content-Security-Policy
// completed: only its own inline script and style, by their hashes, may
// run, so that nothing a memory text could smuggle in ever does.
var viewHTML = sync.OnceValue(func() string {
	return strings.NewReplacer(
		"SCRIPT_HASH", inlineHash(viewSource, "<script>", "</script>"),
		"STYLE_HASH", inlineHash(viewSource, "<style>", "</style>"),
	).Replace(viewSource)
})

// inlineHash is the CSP source ('sha256-…') of the text between open and
// close in doc; it panics when doc has none, a bug the tests catch.
func inlineHash(doc, open, close string) string {
	_, rest, ok := strings.Cut(doc, open)
	body, _, ok2 := strings.Cut(rest, close)
	if !ok || !ok2 {
		panic("tools: memory view has no " + open)
	}
	sum := sha256.Sum256([]byte(body))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// declaresUI reports whether the client of the request declared the MCP
// Apps extension with the HTML MIME type: in the request's own _meta
// (protocol 2026-07-28) or at initialize (earlier revisions, on a
// connection that keeps a session).
func declaresUI(ctx context.Context) bool {
	var caps *mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		caps = info.ClientCapabilities
	} else if session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c := session.GetClientCapabilities()
		caps = &c
	}
	return caps != nil && uiMIMETypes(caps.Extensions[uiExtension])
}

// uiMIMETypes reports whether an extension's settings name appMIMEType
// among their mimeTypes.
func uiMIMETypes(settings any) bool {
	if settings == nil {
		return false
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return false
	}
	var s struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	return json.Unmarshal(raw, &s) == nil && slices.Contains(s.MIMETypes, appMIMEType)
}

// fromView reports whether a tool call is the memory view's, made for
// the person: marked with viewMetaKey by a client that declared the
// extension.
func fromView(ctx context.Context, req mcp.CallToolRequest) bool {
	if req.Params.Meta == nil {
		return false
	}
	marked, _ := req.Params.Meta.AdditionalFields[viewMetaKey].(bool)
	return marked && declaresUI(ctx)
}

// viewToolFilter lists show_memory, linked to the view, to clients that
// declared the extension, and hides it from the others.
func viewToolFilter(ctx context.Context, list []mcp.Tool) []mcp.Tool {
	ui := declaresUI(ctx)
	out := make([]mcp.Tool, 0, len(list))
	for _, t := range list {
		if t.Name == nameShowMemory {
			if !ui {
				continue
			}
			t.Meta = &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"resourceUri": viewURI}}}
		}
		out = append(out, t)
	}
	return out
}

// viewCSP is the view's content security settings: no network, no
// outside resource, no frame.
var viewCSP = map[string]any{
	"connectDomains":  []string{},
	"resourceDomains": []string{},
	"frameDomains":    []string{},
}

// addView registers the view's resource, keeps it out of the listings of
// clients without the extension, and declares the extension in the
// capabilities answered to the clients that declare it.
func addView(s *server.MCPServer, hooks *server.Hooks) {
	s.AddResource(mcp.NewResource(viewURI, "What I remember about you",
		mcp.WithResourceDescription("The memory view: what the assistant remembers about the user, to read, correct, pin, forget and undo. An MCP App for show_memory."),
		mcp.WithMIMEType(appMIMEType)),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{
				URI:      viewURI,
				MIMEType: appMIMEType,
				Text:     viewHTML(),
				Meta:     map[string]any{"ui": map[string]any{"csp": viewCSP, "prefersBorder": true}},
			}}, nil
		})
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if res != nil && !declaresUI(ctx) {
			res.Resources = slices.DeleteFunc(res.Resources, func(r mcp.Resource) bool { return r.URI == viewURI })
		}
	})
	declare := func(caps *mcp.ServerCapabilities) {
		ext := map[string]any{}
		for k, v := range caps.Extensions {
			ext[k] = v
		}
		ext[uiExtension] = map[string]any{"mimeTypes": []string{appMIMEType}}
		caps.Extensions = ext
	}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if req != nil && res != nil && uiMIMETypes(req.Params.Capabilities.Extensions[uiExtension]) {
			declare(&res.Capabilities)
		}
	})
	hooks.AddAfterDiscover(func(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if res != nil && declaresUI(ctx) {
			declare(&res.Capabilities)
		}
	})
}
