package tools

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// uiCaps declares the MCP Apps extension, as a host that shows views does.
var uiCaps = mcp.ClientCapabilities{Extensions: map[string]any{uiExtension: map[string]any{"mimeTypes": []string{appMIMEType}}}}

// TestViewOnlyForHostsThatShowIt: a client that declares the MCP Apps
// extension gets the extension in the server's capabilities, show_memory
// naming the view in _meta.ui.resourceUri, and the ui:// resource listed;
// a client that does not (or declares it without the HTML type) gets none
// of it, and the same tools as before.
func TestViewOnlyForHostsThatShowIt(t *testing.T) {
	other := mcp.ClientCapabilities{Extensions: map[string]any{uiExtension: map[string]any{"mimeTypes": []string{"text/uri-list"}}}}
	for _, tc := range []struct {
		name string
		caps mcp.ClientCapabilities
		ui   bool
	}{
		{"no extension", mcp.ClientCapabilities{}, false},
		{"other MIME type", other, false},
		{"MCP Apps", uiCaps, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvCaps(t, tc.caps, nil)
			_, declared := e.init.Capabilities.Extensions[uiExtension]
			if declared != tc.ui {
				t.Errorf("server capabilities declare %s = %v, want %v", uiExtension, declared, tc.ui)
			}
			list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			linked := ""
			for _, tool := range list.Tools {
				raw, _ := json.Marshal(tool)
				var meta struct {
					Meta struct {
						UI *struct {
							ResourceURI string `json:"resourceUri"`
						} `json:"ui"`
					} `json:"_meta"`
				}
				if err := json.Unmarshal(raw, &meta); err != nil {
					t.Fatal(err)
				}
				if meta.Meta.UI != nil {
					if tool.Name != nameShowMemory {
						t.Errorf("tool %s has _meta.ui, want only %s", tool.Name, nameShowMemory)
					}
					linked = meta.Meta.UI.ResourceURI
				}
				if tool.Name == nameShowMemory && !tc.ui {
					t.Errorf("%s is listed to a client without the extension", nameShowMemory)
				}
			}
			if want := map[bool]string{true: viewURI}[tc.ui]; linked != want {
				t.Errorf("show_memory _meta.ui.resourceUri = %q, want %q", linked, want)
			}
			res, err := e.client.ListResources(t.Context(), mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, r := range res.Resources {
				listed = listed || strings.HasPrefix(r.URI, "ui://")
			}
			if listed != tc.ui {
				t.Errorf("resources/list holds a ui:// resource = %v, want %v", listed, tc.ui)
			}
			if !tc.ui {
				if r, err := e.callErr(t, nameShowMemory, `{}`); err == nil && !r.IsError {
					t.Errorf("%s answered a client without the extension: %+v", nameShowMemory, r)
				}
			}
		})
	}
}

// TestViewResource: the view is one HTML document of the MCP App type,
// asking for no network and no outside resource, whose own policy lets
// only its inline script and style run, by hash.
func TestViewResource(t *testing.T) {
	e := newEnvCaps(t, uiCaps, nil)
	res, err := e.client.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: viewURI}})
	if err != nil {
		t.Fatalf("ReadResource(%s) error = %v", viewURI, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("contents = %d, want 1", len(res.Contents))
	}
	c, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("contents = %T, want text", res.Contents[0])
	}
	if c.URI != viewURI || c.MIMEType != appMIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
		t.Errorf("resource = %s %s %.40q, want %s %s and an HTML5 document", c.URI, c.MIMEType, c.Text, viewURI, appMIMEType)
	}
	raw, _ := json.Marshal(c.Meta)
	var meta struct {
		UI struct {
			CSP map[string][]string `json:"csp"`
		} `json:"ui"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"connectDomains", "resourceDomains"} {
		if d, ok := meta.UI.CSP[k]; !ok || len(d) != 0 {
			t.Errorf("_meta.ui.csp.%s = %v (present %v), want an empty list", k, d, ok)
		}
	}
	for _, part := range []struct{ open, close string }{{"<script>", "</script>"}, {"<style>", "</style>"}} {
		_, rest, _ := strings.Cut(c.Text, part.open)
		body, _, _ := strings.Cut(rest, part.close)
		sum := sha256.Sum256([]byte(body))
		if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(c.Text, want) {
			t.Errorf("the document's policy does not allow its %s by hash %s", part.open, want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://"} {
		if strings.Contains(c.Text, bad) {
			t.Errorf("the view holds %q", bad)
		}
	}
}

// TestShowMemory: show_memory sorts the facts into the view's parts, each
// fact in one part only, and a change the view makes for the person is
// recorded as the person's.
func TestShowMemory(t *testing.T) {
	e := newEnvCaps(t, uiCaps, nil)
	save := func(content, category string, pinned bool) string {
		t.Helper()
		var res memory.SaveFactResult
		args, _ := json.Marshal(map[string]any{"content": content, "category": category, "pinned": pinned})
		e.mustOK(t, nameSaveMemory, string(args), &res)
		return res.Fact.ID
	}
	ids := map[string]string{
		"correction": save("Say Lyon, not Paris: the user moved to Lyon.", memory.CategoryCorrection, false),
		"pinned":     save("Keeps the weekly report short.", memory.CategoryPreference, true),
		"allergy":    save("Is allergic to peanuts.", memory.CategoryContext, false),
		"rule":       save("Wants answers without bullet points.", memory.CategoryBehavior, false),
		"plain":      save("Plays the cello on Sundays.", memory.CategoryPreference, false),
	}
	var ov MemoryOverview
	text := e.mustOK(t, nameShowMemory, `{}`, &ov)
	part := map[string]string{}
	reason := map[string]string{}
	for name, facts := range map[string][]shownFact{"corrections": ov.Corrections, "standing": ov.Standing, "confident": ov.Confident, "recent": ov.Recent} {
		for _, f := range facts {
			if part[f.ID] != "" {
				t.Errorf("fact %s is in %s and %s", f.ID, part[f.ID], name)
			}
			part[f.ID], reason[f.ID] = name, f.Reason
		}
	}
	for _, tc := range []struct{ fact, part, reason string }{
		{"correction", "corrections", reasonCorrection},
		{"pinned", "standing", reasonPinned},
		{"allergy", "standing", reasonConstraint},
		{"rule", "standing", reasonBehavior},
		{"plain", "confident", ""},
	} {
		if id := ids[tc.fact]; part[id] != tc.part || reason[id] != tc.reason {
			t.Errorf("%s fact is in %q (reason %q), want %q (%q)", tc.fact, part[id], reason[id], tc.part, tc.reason)
		}
	}
	if ov.TotalFacts != 5 || !strings.Contains(text, "5 facts") || !strings.Contains(text, ids["pinned"]) {
		t.Errorf("total = %d, text = %q; want 5 facts and the standing ids", ov.TotalFacts, text)
	}

	actors := func(id string) []memory.Actor {
		var h memory.HistoryResult
		e.mustOK(t, nameMemoryHistory, `{"fact_id":"`+id+`"}`, &h)
		var out []memory.Actor
		for _, ev := range h.Events {
			out = append(out, ev.Actor)
		}
		return out
	}
	var req mcp.CallToolRequest
	req.Params.Name = nameUpdateMemory
	req.Params.Arguments = map[string]any{"id": ids["plain"], "content": "Plays the cello on Saturdays."}
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{viewMetaKey: true}}
	if res, err := e.client.CallTool(t.Context(), req); err != nil || res.IsError {
		t.Fatalf("update_memory from the view = %+v, %v", res, err)
	}
	e.mustOK(t, nameUpdateMemory, `{"id":"`+ids["rule"]+`","pinned":true}`, &memory.UpdateFactResult{})
	if got := actors(ids["plain"]); len(got) == 0 || got[len(got)-1] != memory.ActorViewer {
		t.Errorf("actors of the view's edit = %v, want the last %q", got, memory.ActorViewer)
	}
	if got := actors(ids["rule"]); len(got) == 0 || got[len(got)-1] != memory.ActorAssistant {
		t.Errorf("actors of the assistant's edit = %v, want the last %q", got, memory.ActorAssistant)
	}
}

// TestViewMarkNeedsExtension: a call marked as the view's from a client
// that never declared the extension stays the assistant's.
func TestViewMarkNeedsExtension(t *testing.T) {
	e := newEnv(t)
	var saved memory.SaveFactResult
	e.mustOK(t, nameSaveMemory, `{"content":"Reads in the evening."}`, &saved)
	var req mcp.CallToolRequest
	req.Params.Name = nameUpdateMemory
	req.Params.Arguments = map[string]any{"id": saved.Fact.ID, "content": "Reads in the morning."}
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{viewMetaKey: true}}
	if res, err := e.client.CallTool(t.Context(), req); err != nil || res.IsError {
		t.Fatalf("update_memory = %+v, %v", res, err)
	}
	var h memory.HistoryResult
	e.mustOK(t, nameMemoryHistory, `{"fact_id":"`+saved.Fact.ID+`"}`, &h)
	if n := len(h.Events); n == 0 || h.Events[n-1].Actor != memory.ActorAssistant {
		t.Errorf("events = %+v, want the last by %q", h.Events, memory.ActorAssistant)
	}
}
