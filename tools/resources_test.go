package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// readResource reads uri and returns its only text content.
func (e *testEnv) readResource(tb testing.TB, uri string) (string, error) {
	tb.Helper()
	res, err := e.client.ReadResource(tb.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		tb.Fatalf("ReadResource(%s) = %d contents, want 1", uri, len(res.Contents))
	}
	tc, ok := mcp.AsTextResourceContents(res.Contents[0])
	if !ok || tc.URI != uri {
		tb.Fatalf("ReadResource(%s) content = %+v, want text for the URI", uri, res.Contents[0])
	}
	return tc.Text, nil
}

func TestResources(t *testing.T) {
	e := newEnv(t)
	if c := e.init.Capabilities.Resources; c == nil || !c.Subscribe || !c.ListChanged {
		t.Errorf("resource capabilities = %+v, want subscribe and listChanged", c)
	}
	list, err := e.client.ListResources(t.Context(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatalf("ListResources() error = %v", err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	if want := []string{"mnemo://memory/facts.json", "mnemo://memory/profile.json", "mnemo://memory/profile.md"}; !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	tmpl, err := e.client.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatalf("ListResourceTemplates() error = %v", err)
	}
	var templates []string
	for _, r := range tmpl.ResourceTemplates {
		templates = append(templates, r.URITemplate.Raw())
	}
	slices.Sort(templates)
	want := []string{
		"mnemo://memory/{user_id}/facts.json", "mnemo://memory/{user_id}/profile.json", "mnemo://memory/{user_id}/profile.md",
		"mnemo://memory/{user_id}/{agent_name}/facts.json", "mnemo://memory/{user_id}/{agent_name}/profile.json", "mnemo://memory/{user_id}/{agent_name}/profile.md",
	}
	if !slices.Equal(templates, want) {
		t.Errorf("templates = %v, want %v", templates, want)
	}

	text, err := e.readResource(t, "mnemo://memory/profile.md")
	if err != nil || !strings.Contains(text, "# Memory of user default") || !strings.Contains(text, "Nothing has been learned yet") {
		t.Errorf("empty profile.md = %q, %v", text, err)
	}
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Prefers tea", "category": "preference"}`, &saved)
	e.mustOK(t, "save_memory", `{"content": "Bob's secret fact", "user_id": "bob"}`, &saved)
	e.mustOK(t, "save_memory", `{"content": "Bob's coder fact", "user_id": "bob", "agent_name": "coder"}`, &saved)

	text, _ = e.readResource(t, "mnemo://memory/profile.md")
	if !strings.Contains(text, "### preference\n\n- Prefers tea _(fact_") || strings.Contains(text, "Bob") {
		t.Errorf("profile.md = %q, want the default user's fact only", text)
	}
	var prof memory.ProfileResult
	text, _ = e.readResource(t, "mnemo://memory/profile.json")
	if err := json.Unmarshal([]byte(text), &prof); err != nil || len(prof.Facts) != 1 || prof.Scope.UserID != "default" {
		t.Errorf("profile.json = %s (%v)", text, err)
	}
	var facts struct {
		Scope memory.Scope  `json:"scope"`
		Facts []memory.Fact `json:"facts"`
	}
	for uri, want := range map[string]string{
		"mnemo://memory/facts.json":           "Prefers tea",
		"mnemo://memory/bob/facts.json":       "Bob's secret fact",
		"mnemo://memory/bob/coder/facts.json": "Bob's coder fact",
	} {
		text, err := e.readResource(t, uri)
		if err != nil {
			t.Fatalf("ReadResource(%s) error = %v", uri, err)
		}
		if err := json.Unmarshal([]byte(text), &facts); err != nil || len(facts.Facts) != 1 || facts.Facts[0].Content != want {
			t.Errorf("%s = %s, want only %q", uri, text, want)
		}
	}
	text, _ = e.readResource(t, "mnemo://memory/bob/profile.md")
	if !strings.Contains(text, "# Memory of user bob") || strings.Contains(text, "coder fact") || strings.Contains(text, "tea") {
		t.Errorf("bob's profile.md = %q", text)
	}
	if _, err := e.readResource(t, "mnemo://memory/..%2Fetc/profile.json"); err == nil {
		t.Errorf("reading a resource with a bad user_id succeeded")
	}
	if _, err := e.readResource(t, "mnemo://memory/nobody/unknown.txt"); err == nil {
		t.Errorf("reading an unknown resource succeeded")
	}
}

func TestResourceNotifications(t *testing.T) {
	e := newEnv(t)
	got := make(chan mcp.JSONRPCNotification, 100)
	e.client.OnNotification(func(n mcp.JSONRPCNotification) { got <- n })
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Prefers tea"}`, &saved)

	wantUpdated := map[string]bool{"mnemo://memory/profile.json": true, "mnemo://memory/profile.md": true, "mnemo://memory/facts.json": true,
		"mnemo://memory/default/profile.json": true}
	listChanged := false
	timeout := t.Context().Done() // no deadline of its own: go test -timeout
	for len(wantUpdated) > 0 || !listChanged {
		select {
		case n := <-got:
			switch n.Method {
			case mcp.MethodNotificationResourceUpdated:
				uri, _ := n.Params.AdditionalFields["uri"].(string)
				delete(wantUpdated, uri)
			case mcp.MethodNotificationResourcesListChanged:
				listChanged = true
			}
		case <-timeout:
			t.Fatalf("after save_memory: missing updated %v, list_changed %v", wantUpdated, listChanged)
		}
	}
	list, err := e.client.ListResources(t.Context(), mcp.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 6 {
		t.Errorf("resources after a change = %d, %v; want the 3 defaults and the 3 of the changed scope", len(list.Resources), err)
	}
	//lint:ignore SA1019 clients on protocol versions before 2026-07-28 still send resources/subscribe; the server must accept it.
	if err := e.client.Subscribe(t.Context(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "mnemo://memory/profile.json"}}); err != nil {
		t.Errorf("Subscribe() error = %v", err)
	}
}

func TestMemoryGuidePrompt(t *testing.T) {
	e := newEnv(t, WithDefaultUser("alice"))
	list, err := e.client.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "memory_guide" || list.Prompts[0].Description == "" {
		t.Fatalf("ListPrompts() = %+v, %v; want memory_guide", list, err)
	}
	res, err := e.client.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "memory_guide"}})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("GetPrompt() = %+v, %v", res, err)
	}
	tc, ok := mcp.AsTextContent(res.Messages[0].Content)
	if !ok {
		t.Fatalf("prompt content = %T, want text", res.Messages[0].Content)
	}
	for _, st := range All(nil) {
		if st.Tool.Name == nameShowMemory {
			continue // listed only to hosts that show views; its description says when to call it
		}
		if !strings.Contains(tc.Text, st.Tool.Name) {
			t.Errorf("memory_guide does not mention %s", st.Tool.Name)
		}
	}
	if !strings.Contains(tc.Text, "(alice)") || !strings.Contains(tc.Text, `"forget everything"`) {
		t.Errorf("memory_guide = %q", tc.Text)
	}
}
