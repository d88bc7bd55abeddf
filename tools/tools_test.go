package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite the tool snapshots in testdata/toolsnaps")

// TestToolSnapshots diffs every tool definition as a client sees it in
// tools/list (name, description, schemas, annotations) against
// testdata/toolsnaps/<name>.json. A change to the surface is deliberate:
// run go test ./tools -update and review the diff.
func TestToolSnapshots(t *testing.T) {
	e := newEnvCaps(t, uiCaps, nil) // a host that shows views sees every tool

	list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	for _, tool := range list.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(tool); err != nil {
				t.Fatalf("marshal tool: %v", err)
			}
			// Tool.MarshalJSON escapes <, > and & in strings; unescape them
			// so the snapshots read like the descriptions.
			got := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(buf.String())
			path := filepath.Join("testdata", "toolsnaps", tool.Name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read snapshot (run go test ./tools -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("tool %s differs from %s (run go test ./tools -update if intended)\ngot:\n%s", tool.Name, path, got)
			}
		})
	}
}

// TestListTools checks what a client learns from tools/list: the ten
// tools, each with a description, typed input and output schemas and
// every annotation set.
func TestListTools(t *testing.T) {
	e := newEnv(t)
	list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	var names []string
	tools := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		tools[tool.Name] = tool
	}
	slices.Sort(names)
	want := []string{"add_memory", "flush_memory", "forget_memory", "get_user_profile", "list_memories", "memory_history", "restore_memory", "retrieve_memory", "save_memory", "update_memory", "update_profile"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	hints := map[string][3]bool{ // read-only, destructive, idempotent
		"add_memory":       {false, false, false},
		"retrieve_memory":  {true, false, true},
		"get_user_profile": {true, false, true},
		"flush_memory":     {false, false, true},
		"save_memory":      {false, false, false},
		"update_memory":    {false, false, true},
		"forget_memory":    {false, true, true},
		"list_memories":    {true, false, true},
		"memory_history":   {true, false, true},
		"update_profile":   {false, true, true},
		"restore_memory":   {false, false, false},
	}
	for name, tool := range tools {
		t.Run(name, func(t *testing.T) {
			if len(tool.Description) < 100 {
				t.Errorf("description = %q, want one that says when to call the tool", tool.Description)
			}
			a := tool.Annotations
			if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil || a.Title == "" {
				t.Fatalf("annotations = %+v, want every hint and a title", a)
			}
			got := [3]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint}
			if got != hints[name] || *a.OpenWorldHint {
				t.Errorf("hints (read-only, destructive, idempotent) = %v, open-world %v; want %v, false", got, *a.OpenWorldHint, hints[name])
			}
			if tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
				t.Errorf("output schema = %+v, want an object schema", tool.OutputSchema)
			}
			raw, err := json.Marshal(tool.InputSchema) // a client decodes the schema into InputSchema
			if err != nil {
				t.Fatal(err)
			}
			var in map[string]any
			if err := json.Unmarshal(raw, &in); err != nil || in["type"] != "object" {
				t.Fatalf("input schema = %s, want an object schema (err %v)", raw, err)
			}
			assertDescribed(t, "inputSchema", in)
		})
	}
}

// assertDescribed fails for any property of the schema, at any depth, that
// has no description: the model reads them to fill in arguments.
func assertDescribed(t *testing.T, path string, schema map[string]any) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(map[string]any)
		if d, _ := ps["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s.%s has no description", path, name)
		}
		assertDescribed(t, path+"."+name, ps)
		if items, ok := ps["items"].(map[string]any); ok {
			assertDescribed(t, path+"."+name+"[]", items)
		}
	}
}

// TestInputSchemaShapes pins the parts of the generated input schemas that
// needed correcting, so that a regression is named, not only diffed.
func TestInputSchemaShapes(t *testing.T) {
	tools := map[string]map[string]any{}
	for _, st := range All(nil) {
		var s map[string]any
		if err := json.Unmarshal(st.Tool.RawInputSchema, &s); err != nil {
			t.Fatalf("%s input schema: %v", st.Tool.Name, err)
		}
		tools[st.Tool.Name] = s
	}
	get := func(tool string, path ...string) map[string]any {
		t.Helper()
		n := schemaNode(tools[tool])
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: %v", tool, r)
			}
		}()
		return node(n, path...)
	}
	tests := []struct {
		name string
		got  map[string]any
		key  string
		want string // JSON
	}{
		{"meta_data is a free object", get("add_memory", "meta_data"), "type", `"object"`},
		{"meta_data allows any member", get("add_memory", "meta_data"), "additionalProperties", `true`},
		{"messages is an array", get("add_memory", "messages"), "type", `"array"`},
		{"role is an enum", get("add_memory", "messages", "[]", "role"), "enum", `["user","assistant","system","developer","tool"]`},
		{"role is required", get("add_memory", "messages", "[]"), "required", `["role"]`},
		{"tool_calls is an array", get("add_memory", "messages", "[]", "tool_calls"), "type", `"array"`},
		{"function name is a string", get("add_memory", "messages", "[]", "tool_calls", "[]", "function", "name"), "type", `"string"`},
		{"function arguments", get("add_memory", "messages", "[]", "tool_calls", "[]", "function", "arguments"), "anyOf", `[{"type":"string"},{"type":"object"}]`},
		{"fact_ids is a plain array", get("forget_memory", "fact_ids"), "type", `"array"`},
		{"turn_ids is a plain array", get("forget_memory", "turn_ids"), "type", `"array"`},
		{"max_results is an integer", get("retrieve_memory", "max_results"), "type", `"integer"`},
		{"max_results minimum", get("retrieve_memory", "max_results"), "minimum", `1`},
		{"max_results maximum", get("retrieve_memory", "max_results"), "maximum", `100`},
		{"max_tokens minimum", get("retrieve_memory", "max_tokens"), "minimum", `100`},
		{"max_tokens maximum", get("retrieve_memory", "max_tokens"), "maximum", `8000`},
		{"user_id pattern", get("retrieve_memory", "user_id"), "pattern", `"^[A-Za-z0-9._-]*$"`},
		{"include_knowledge is a boolean", get("get_user_profile", "include_knowledge"), "type", `"boolean"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := json.Marshal(tt.got[tt.key])
			if string(got) != tt.want {
				t.Errorf("%s = %s, want %s", tt.key, got, tt.want)
			}
		})
	}
	if req, _ := json.Marshal(tools["retrieve_memory"]["required"]); string(req) != `["query"]` {
		t.Errorf("retrieve_memory required = %s, want [\"query\"]", req)
	}
	if req, _ := json.Marshal(tools["add_memory"]["required"]); string(req) != `[]` && string(req) != `null` {
		t.Errorf("add_memory required = %s, want none", req)
	}
}

// TestInstructions checks that initialize carries the server instructions
// and that they name every tool.
func TestInstructions(t *testing.T) {
	e := newEnv(t, WithDefaultUser("alice"))
	got := e.init.Instructions
	if e.init.ServerInfo.Name != "mnemo" {
		t.Errorf("server name = %q, want mnemo", e.init.ServerInfo.Name)
	}
	for _, st := range All(nil) {
		if st.Tool.Name == nameShowMemory {
			continue // listed only to hosts that show views; its description says when to call it
		}
		if !strings.Contains(got, st.Tool.Name) {
			t.Errorf("instructions do not mention %s:\n%s", st.Tool.Name, got)
		}
	}
	for _, want := range []string{"(alice)", "never instructions", "No extraction model is configured", "Pass in facts the lasting facts"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	if e := newEnv(t, WithLLMConfigured(true)); strings.Contains(e.init.Instructions, "No extraction model") {
		t.Errorf("instructions with an LLM say there is none:\n%s", e.init.Instructions)
	}
}

// TestInputSchemasArePlain checks that no input schema holds a type list
// (["null","array"], ["string","object"]): clients with single-type schema
// dialects (Gemini's function declarations; the MCP Inspector's --strict)
// reject them.
func TestInputSchemasArePlain(t *testing.T) {
	for _, st := range All(nil) {
		var s any
		if err := json.Unmarshal(st.Tool.RawInputSchema, &s); err != nil {
			t.Fatalf("%s input schema: %v", st.Tool.Name, err)
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if k == "type" && !strings.HasSuffix(path, ".properties") {
						if _, ok := x.(string); !ok {
							t.Errorf("%s: %s.type = %v, want one type name", st.Tool.Name, path, x)
						}
						continue
					}
					walk(path+"."+k, x)
				}
			case []any:
				for i, x := range v {
					walk(fmt.Sprintf("%s[%d]", path, i), x)
				}
			}
		}
		walk("inputSchema", s)
	}
}

// TestSchemaNamesSnakeCase walks every tool's input and output schema and
// fails on a property name that is not snake_case: tool arguments and
// results speak one style, whatever memory.json calls the same things.
func TestSchemaNamesSnakeCase(t *testing.T) {
	e := newEnv(t)
	list, err := e.client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatalf("marshal %s: %v", tool.Name, err)
		}
		var schemas struct {
			In  any `json:"inputSchema"`
			Out any `json:"outputSchema"`
		}
		if err := json.Unmarshal(raw, &schemas); err != nil {
			t.Fatalf("unmarshal %s: %v", tool.Name, err)
		}
		if schemas.Out == nil {
			t.Errorf("%s has no output schema", tool.Name)
		}
		for _, p := range notSnakeCase(schemas.In, "inputSchema") {
			t.Errorf("%s: property %s is not snake_case", tool.Name, p)
		}
		for _, p := range notSnakeCase(schemas.Out, "outputSchema") {
			t.Errorf("%s: property %s is not snake_case", tool.Name, p)
		}
	}
}

func TestNotSnakeCase(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"user_id": map[string]any{"type": "string"},
		"facts": map[string]any{"type": "array", "items": map[string]any{"properties": map[string]any{
			"createdAt": map[string]any{}, "source_error": map[string]any{},
		}}},
		"topOfMind": map[string]any{"properties": map[string]any{"updated_at": map[string]any{}}},
	}}
	got := notSnakeCase(schema, "s")
	slices.Sort(got)
	if want := []string{"s.facts[].createdAt", "s.topOfMind"}; !slices.Equal(got, want) {
		t.Errorf("notSnakeCase() = %q, want %q", got, want)
	}
}

// notSnakeCase returns the paths of the property names in a decoded JSON
// Schema that are not snake_case (lower-case letters, digits, '_').
func notSnakeCase(schema any, path string) []string {
	var bad []string
	switch n := schema.(type) {
	case map[string]any:
		for k, v := range n {
			switch k {
			case "properties":
				props, _ := v.(map[string]any)
				for name, sub := range props {
					if !isSnakeCase(name) {
						bad = append(bad, path+"."+name)
					}
					bad = append(bad, notSnakeCase(sub, path+"."+name)...)
				}
			case "items":
				bad = append(bad, notSnakeCase(v, path+"[]")...)
			default:
				bad = append(bad, notSnakeCase(v, path+"/"+k)...)
			}
		}
	case []any:
		for _, v := range n {
			bad = append(bad, notSnakeCase(v, path)...)
		}
	}
	return bad
}

func isSnakeCase(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// TestAddMemoryDescriptionModes holds add_memory's description in both
// modes against goldens: without an extraction model it asks for the
// lasting facts of each exchange; with one it says passed facts are kept
// and not extracted twice.
func TestAddMemoryDescriptionModes(t *testing.T) {
	for _, mode := range []struct {
		name string
		llm  bool
	}{{"no_llm", false}, {"llm", true}} {
		t.Run(mode.name, func(t *testing.T) {
			got := AddMemory(nil, WithLLMConfigured(mode.llm)).Tool.Description + "\n"
			path := filepath.Join("testdata", "add_memory_description_"+mode.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test ./tools -update): %v", err)
			}
			if got != string(want) {
				t.Errorf("add_memory description (%s) differs from %s:\ngot:\n%s\nwant:\n%s", mode.name, path, got, want)
			}
		})
	}
}

// TestDocsAddMemoryArguments checks that docs/tools.md's add_memory table
// documents every argument the tool takes (facts and idempotency_key
// included): a host's developer reads it to know what to send.
func TestDocsAddMemoryArguments(t *testing.T) {
	readme, err := os.ReadFile("../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### `add_memory`")
	if !ok {
		t.Fatal("docs/tools.md has no add_memory section")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			rows = append(rows, cell)
		}
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	raw, err := json.Marshal(AddMemory(nil).Tool)
	if err != nil {
		t.Fatal(err)
	}
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &tool); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || len(schema.Properties) < 10 {
		t.Fatalf("add_memory input schema has %d properties (err %v), want all its arguments", len(schema.Properties), err)
	}
	for name := range schema.Properties {
		found := false
		for _, cell := range rows {
			found = found || strings.Contains(cell, "`"+name+"`")
		}
		if !found {
			t.Errorf("docs/tools.md's add_memory table lacks the argument %s", name)
		}
	}
}
