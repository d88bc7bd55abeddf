package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The memory view (an MCP App, extension io.modelcontextprotocol/ui) as a
// host shows it: the test is the host. Its Go side is an MCP client of
// the real mnemo serve --http that declares the extension; its page,
// served over httptest, reads the view from the ui:// resource, puts it
// in a sandboxed frame (srcdoc, allow-scripts only), speaks the
// extension's messages with it (ui/initialize, tool-input, tool-result,
// size-changed) and relays the view's tools/call to the Go side. In
// Chromium the person corrects a fact, pins one, forgets one and undoes
// the correction; each change is then checked through MCP.

const (
	uiExtension = "io.modelcontextprotocol/ui"
	appMIMEType = "text/html;profile=mcp-app"
)

// appHostPage is the host's page: the view in a sandboxed frame, and the
// relay of its requests to /rpc.
const appHostPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Test host</title>
<style>body{margin:0;padding:10px;background:#ddd} iframe{border:0;width:400px;height:300px;display:block;background:#fff}</style></head>
<body><main><h1>Test host</h1><iframe id="view" sandbox="allow-scripts" title="What I remember about you"></iframe></main>
<script>
"use strict";
const frame = document.getElementById("view");
window.host = {theme: "light", width: 400, sizes: [], calls: [], errors: []};
function send(msg) { frame.contentWindow.postMessage(msg, "*"); }
async function rpc(method, params) {
  const r = await fetch("/rpc", {method: "POST", body: JSON.stringify({method: method, params: params})});
  const body = await r.json();
  if (body.error) { throw new Error(body.error); }
  return body.result;
}
function context() {
  const dark = host.theme === "dark";
  return {theme: host.theme, displayMode: "inline", platform: "web",
    containerDimensions: {width: host.width, maxHeight: 4000},
    styles: {variables: {"--color-background-primary": dark ? "#161616" : "#ffffff", "--color-text-primary": dark ? "#f4f4f4" : "#151515"}}};
}
window.setHost = function (theme, width) {
  host.theme = theme; host.width = width;
  frame.style.width = width + "px";
  send({jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: context()});
};
window.addEventListener("message", async function (ev) {
  if (ev.source !== frame.contentWindow) { return; }
  const m = ev.data;
  try {
    switch (m.method) {
    case "ui/initialize":
      host.init = m.params;
      send({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "mnemo-test-host", version: "1"},
        hostCapabilities: {serverTools: {}}, hostContext: context()}});
      break;
    case "ui/notifications/initialized": {
      host.initialized = true;
      send({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: {}}});
      const r = await rpc("tools/call", {name: "show_memory", arguments: {}});
      send({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: r});
      host.resultSent = true;
      break;
    }
    case "ui/notifications/size-changed":
      host.sizes.push(m.params);
      if (host.resultSent) { host.rendered = true; }
      frame.style.height = Math.min(m.params.height, 4000) + "px";
      break;
    case "tools/call":
      host.calls.push(m.params.name);
      send({jsonrpc: "2.0", id: m.id, result: await rpc("tools/call", m.params)});
      break;
    default:
      if (m.id !== undefined) { send({jsonrpc: "2.0", id: m.id, error: {code: -32601, message: "not supported"}}); }
    }
  } catch (e) {
    host.errors.push(String(e));
    if (m.id !== undefined) { send({jsonrpc: "2.0", id: m.id, error: {code: -32603, message: String(e)}}); }
  }
});
rpc("resources/read", {uri: "ui://mnemo/memory"}).then(function (r) {
  host.resource = {mimeType: r.contents[0].mimeType, meta: r.contents[0]._meta};
  frame.srcdoc = r.contents[0].text;
}, function (e) { host.errors.push(String(e)); });
</script></body></html>`

// appClient is an MCP client of url (Streamable HTTP, with token) that
// declares the MCP Apps extension, or not.
func appClient(t *testing.T, url, token string, ui bool) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var caps mcp.ClientCapabilities
	if ui {
		caps.Extensions = map[string]any{uiExtension: map[string]any{"mimeTypes": []string{appMIMEType}}}
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "mnemo-test-host", Version: "1"}, Capabilities: caps}}); err != nil {
		t.Fatalf("Initialize() error = %v", err)
	}
	return c
}

// appHost serves the host page and relays its /rpc to c.
func appHost(t *testing.T, c *client.Client) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, appHostPage)
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		reply := func(res any, err error) {
			out := map[string]any{"result": res}
			if err != nil {
				out = map[string]any{"error": err.Error()}
			}
			json.NewEncoder(w).Encode(out)
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			reply(nil, err)
			return
		}
		switch req.Method {
		case "tools/call":
			var call mcp.CallToolRequest
			if err := json.Unmarshal(req.Params, &call.Params); err != nil {
				reply(nil, err)
				return
			}
			reply(c.CallTool(r.Context(), call))
		case "resources/read":
			var read mcp.ReadResourceRequest
			if err := json.Unmarshal(req.Params, &read.Params); err != nil {
				reply(nil, err)
				return
			}
			reply(c.ReadResource(r.Context(), read))
		default:
			reply(nil, fmt.Errorf("the host relays no %s", req.Method))
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// appTool calls a tool through c and decodes its structured result.
func appTool(t *testing.T, c *client.Client, name string, args map[string]any, out any) {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("%s(%v) = %+v, %v", name, args, res, err)
	}
	if out == nil {
		return
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestAppBrowser: the memory view in a test host in Chromium, over mnemo
// serve --http with two users.
func TestAppBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	axe := axeScript(t)
	dir := t.TempDir()
	alice, bob := httpToken(t, dir, "alice"), httpToken(t, dir, "bob")
	srv := startHTTP(t, dir, nil)
	ac := appClient(t, srv.url, alice, true)
	bc := appClient(t, srv.url, bob, true)

	save := func(c *client.Client, content, category string) string {
		t.Helper()
		var res memory.SaveFactResult
		appTool(t, c, "save_memory", map[string]any{"content": content, "category": category}, &res)
		return res.Fact.ID
	}
	city := save(ac, "Lives in Paris.", "context")
	cello := save(ac, "Plays the cello on Sundays.", "preference")
	save(ac, "Sails a sloop called Marlin.", "context")
	save(ac, "Is allergic to peanuts.", "context")
	hostile := `<img src=x onerror="window.parent.postMessage({jsonrpc:'2.0',id:99,method:'tools/call',params:{name:'forget_memory',arguments:{all:true,confirm:'forget everything'}}},'*')"><script>document.title='owned'</script>`
	save(ac, hostile, "knowledge")
	bobFact := save(bc, "Bob keeps bees.", "context")

	// A client of the same server without the extension sees no view.
	plain := appClient(t, srv.url, alice, false)
	tools, err := plain.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "show_memory" || tool.Meta != nil && tool.Meta.AdditionalFields["ui"] != nil {
			t.Errorf("a client without the extension sees %s with _meta %+v", tool.Name, tool.Meta)
		}
	}

	host := appHost(t, ac)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := browser(t, ctx)
	if err := chromedp.Do(b, chromedp.EmulateViewport(460, 900), chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	// The view runs in its own frame (a sandboxed srcdoc is out of
	// process): the test attaches to it to act as the person, once the
	// view has laid out the tool's result (it says its new size). A
	// frame attached while its document still changes can race in
	// chromedp: its node map is filled on the attaching goroutine while
	// the target's reads it for each DOM event (chromedp v0.23,
	// Target.documentUpdated and Target.domEvent).
	waitUntil(ctx, t, "the view's first layout of the tool result", func() bool {
		rendered, err := chromedp.Run(b, chromedp.Evaluate[bool](`host.rendered === true`))
		return err == nil && rendered
	})
	var frameID target.ID
	waitUntil(ctx, t, "the view's frame", func() bool {
		ts, err := chromedp.Targets(b)
		for _, ti := range ts {
			if err == nil && ti.Type == "iframe" && ti.URL == "about:srcdoc" {
				frameID = ti.TargetID
			}
		}
		return frameID != ""
	})
	view, _ := chromedp.NewContext(b, chromedp.WithTargetID(frameID))
	evalIn := func(c context.Context, js string) string {
		t.Helper()
		s, err := chromedp.Run(c, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	// waitView waits until the view is done with its last change (its
	// refresh too) and predicate holds.
	waitView := func(what, predicate string) {
		t.Helper()
		predicate = `!document.querySelector("main[aria-busy]") && (` + predicate + `)`
		if _, err := chromedp.Run(view, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(0))); err != nil {
			t.Fatalf("%s: the view never satisfied %s: %v\nview:\n%s\nhost: %s", what, predicate, err,
				evalIn(view, `document.body ? document.body.innerText : ""`), evalIn(b, `JSON.stringify(window.host)`))
		}
	}
	viewText := func() string { return evalIn(view, `document.body.innerText`) }
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(view, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// button finds a fact's button by its accessible name.
	button := func(name string) chromedp.Action[chromedp.Void] {
		q, _ := json.Marshal(name)
		return chromedp.Click(chromedp.CSS("button[aria-label=" + string(q) + "]"))
	}
	checkWidths := func(what string) {
		t.Helper()
		for _, s := range []struct {
			theme string
			w     int
		}{{"light", 400}, {"dark", 800}} {
			if err := chromedp.Do(b, chromedp.EmulateViewport(int64(s.w+60), 900),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf("setHost(%q, %d)", s.theme, s.w))); err != nil {
				t.Fatal(err)
			}
			waitView("theme "+s.theme, fmt.Sprintf(`document.documentElement.getAttribute("data-theme") === %q && window.innerWidth === %d`, s.theme, s.w))
			if axe != "" {
				checkAxe(t, view, axe, fmt.Sprintf("%s, %s at %d px", what, s.theme, s.w))
			}
			if evalIn(view, `String(document.documentElement.scrollWidth > window.innerWidth + 1)`) == "true" {
				t.Errorf("%s scrolls sideways at %d px", what, s.w)
			}
		}
	}

	waitView("rendered", `document.body.innerText.includes("Plays the cello on Sundays.")`)
	got := viewText()
	for _, want := range []string{"What I remember about you", "Kept in mind in every conversation", "Is allergic to peanuts.", "Lives in Paris.", hostile} {
		if !strings.Contains(got, want) {
			t.Errorf("the view does not show %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"Bob keeps bees", "fact_", "confidence", "0.8"} {
		if strings.Contains(got, leak) {
			t.Errorf("the view shows %q:\n%s", leak, got)
		}
	}
	if n := evalIn(view, `String(document.querySelectorAll("main img, main script").length)`); n != "0" {
		t.Errorf("memory text became %s elements in the view", n)
	}
	if tt := evalIn(view, `document.title`); tt == "owned" {
		t.Error("a script in memory text ran")
	}
	hostState := evalIn(b, `JSON.stringify({init: host.init, sizes: host.sizes.length, resource: host.resource, errors: host.errors})`)
	for _, want := range []string{`"protocolVersion":"2026-01-26"`, `"mimeType":"text/html;profile=mcp-app"`, `"connectDomains":[]`, `"errors":[]`} {
		if !strings.Contains(hostState, want) {
			t.Errorf("host saw %s, want %s in it", hostState, want)
		}
	}
	if strings.Contains(hostState, `"sizes":0`) {
		t.Errorf("the view sent no ui/notifications/size-changed: %s", hostState)
	}
	checkWidths("the view")

	// Correct a fact.
	do("correct", button("Correct: Lives in Paris."))
	do("type", chromedp.SetValue(chromedp.CSS("#edit-"+city), "Lives in Lyon."), chromedp.Click(chromedp.CSS("#save-"+city)))
	waitView("corrected", `document.getElementById("status").innerText.includes("Corrected")`)
	var list memory.ListResult
	appTool(t, ac, "list_memories", map[string]any{"text": "Lives in"}, &list)
	if len(list.Facts) != 1 || list.Facts[0].ID != city || list.Facts[0].Content != "Lives in Lyon." {
		t.Errorf("after the correction list_memories = %+v, want %s reading Lives in Lyon.", list.Facts, city)
	}
	var hist memory.HistoryResult
	appTool(t, ac, "memory_history", map[string]any{"fact_id": city}, &hist)
	if n := len(hist.Events); n == 0 || hist.Events[n-1].Actor != memory.ActorViewer {
		t.Errorf("the correction's history = %+v, want the last event by %q", hist.Events, memory.ActorViewer)
	}

	// Pin one.
	do("pin", button("Pin: Plays the cello on Sundays."))
	waitView("pinned", `document.getElementById("status").innerText.includes("Pinned")`)
	var shown struct {
		Standing []memory.Fact `json:"standing"`
	}
	appTool(t, ac, "show_memory", nil, &shown)
	pinned := false
	for _, f := range shown.Standing {
		pinned = pinned || f.ID == cello && f.Pinned
	}
	if !pinned {
		t.Errorf("after the pin the standing facts = %+v, want %s pinned", shown.Standing, cello)
	}

	// Forget one: the view says truthfully what may still mention it.
	do("forget", button("Forget: Sails a sloop called Marlin."))
	do("confirm", chromedp.Click(chromedp.CSS("#confirm-forget")))
	waitView("forgotten", `document.getElementById("status").innerText.includes("Forgotten")`)
	if st := evalIn(view, `document.getElementById("status").innerText`); !strings.Contains(st, "Marlin") ||
		!(strings.Contains(st, "may still mention") || strings.Contains(st, "Nothing else I hold")) {
		t.Errorf("the forget's status = %q, want what went and what may still mention it", st)
	}
	list = memory.ListResult{}
	appTool(t, ac, "list_memories", map[string]any{"text": "Marlin"}, &list)
	if list.Total != 0 {
		t.Errorf("after the forget list_memories finds %+v", list.Facts)
	}
	if strings.Contains(evalIn(view, `document.getElementById("view").innerText`), "Sails a sloop") {
		t.Error("the view still shows the forgotten fact")
	}

	// Undo: the pin goes first (the last change), then the correction.
	do("undo pin", chromedp.Click(chromedp.CSS("#undo")))
	waitView("unpinned", `document.getElementById("status").innerText.includes("Undone")`)
	do("undo correction", chromedp.Click(chromedp.CSS("#undo")))
	waitView("undone", `document.getElementById("view").innerText.includes("Lives in Paris.")`)
	list = memory.ListResult{}
	appTool(t, ac, "list_memories", map[string]any{"text": "Lives in"}, &list)
	if len(list.Facts) != 1 || list.Facts[0].Content != "Lives in Paris." {
		t.Errorf("after the undo list_memories = %+v, want Lives in Paris.", list.Facts)
	}
	list = memory.ListResult{}
	appTool(t, ac, "list_memories", map[string]any{"text": "cello"}, &list)
	if len(list.Facts) != 1 || list.Facts[0].Pinned {
		t.Errorf("after the undo the cello fact = %+v, want unpinned", list.Facts)
	}
	checkWidths("the view after the changes")

	// Bob's memory is his own: untouched, and his view holds only it.
	var bobs memory.ListResult
	appTool(t, bc, "list_memories", nil, &bobs)
	if bobs.Total != 1 || bobs.Facts[0].ID != bobFact {
		t.Errorf("bob's facts = %+v, want only %s", bobs.Facts, bobFact)
	}
	var bobView struct {
		TotalFacts int           `json:"total_facts"`
		Recent     []memory.Fact `json:"recent"`
		Confident  []memory.Fact `json:"confident"`
	}
	appTool(t, bc, "show_memory", nil, &bobView)
	if bobView.TotalFacts != 1 {
		t.Errorf("bob's show_memory = %+v, want his one fact", bobView)
	}
	// A view of bob's that names alice's fact reaches nothing of hers.
	var cross mcp.CallToolRequest
	cross.Params.Name = "forget_memory"
	cross.Params.Arguments = map[string]any{"fact_ids": []string{city}}
	cross.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"io.github.mnemo-mcp/view": true}}
	if _, err := bc.CallTool(t.Context(), cross); err != nil {
		t.Fatal(err)
	}
	list = memory.ListResult{}
	appTool(t, ac, "list_memories", map[string]any{"text": "Lives in"}, &list)
	if len(list.Facts) != 1 {
		t.Errorf("bob's forget of alice's fact id reached her memory: %+v", list.Facts)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
