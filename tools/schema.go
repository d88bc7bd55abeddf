package tools

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// mcp.WithInputSchema and mcp.WithOutputSchema generate JSON Schema from Go
// types (github.com/google/jsonschema-go). Most of it is right; a few
// things are not, and the options below correct them after generation:
//
//   - json.RawMessage is []byte, so meta_data came out as an array of
//     integers 0–255 (or null); it is a free JSON object.
//   - pointers and slices came out nullable (["null", "array"]); clients
//     send a value or leave the argument out (a null argument is dropped
//     as if left out, args.go), so input schemas say the one type:
//     validators that map schemas onto a single-type dialect (Gemini's
//     function declarations, the MCP Inspector's --strict) reject a type
//     list. plainTypes does this for every input schema, after the fixes,
//     and splits any other type list into anyOf branches.
//   - ranges, patterns and enums that tags cannot express are added.
//
// The corrected schema is what clients see in tools/list and what each
// call's arguments are validated against (validate.go); the argument
// structs define how validated arguments decode.

// The generation takes most of the time a server takes to start (each
// schema is reflected, marshalled, decoded, fixed and marshalled again),
// so it is done at build time: schemas.json holds every tool's schemas as
// inputSchema and outputSchema generate them, and the tools are built from
// it. TestSchemasCurrent regenerates them and fails when schemas.json is
// stale; go test ./tools -update rewrites it.

//go:embed schemas.json
var schemasJSON []byte

// toolSchemas are one tool's generated schemas, as clients see them.
type toolSchemas struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// generated is schemas.json by tool name, read on first use.
var generated = sync.OnceValue(func() map[string]toolSchemas {
	var m map[string]toolSchemas
	if err := json.Unmarshal(schemasJSON, &m); err != nil {
		panic(fmt.Sprintf("tools: schemas.json: %v", err))
	}
	return m
})

// regenerate makes inputSchema and outputSchema generate the schemas
// instead of reading schemas.json (TestSchemasCurrent).
var regenerate atomic.Bool

// schemaNode is a decoded JSON Schema object.
type schemaNode = map[string]any

// inputSchema sets the tool's input schema from T, then applies fix to the
// decoded schema (from schemas.json, when it holds the tool). It panics when the schema cannot be generated, which is a
// bug that every test run catches.
func inputSchema[T any](fix func(root schemaNode)) mcp.ToolOption {
	return func(t *mcp.Tool) {
		if g, ok := generated()[t.Name]; ok && g.Input != nil && !regenerate.Load() {
			t.InputSchema.Type = "" // as mcp.WithInputSchema leaves it
			t.RawInputSchema = g.Input
			return
		}
		mcp.WithInputSchema[T]()(t)
		var s mcp.ToolInputSchema // keeps the properties in field order
		if err := json.Unmarshal(t.RawInputSchema, &s); err != nil {
			panic(fmt.Sprintf("tools: input schema of %s: %v", t.Name, err))
		}
		root := schemaNode{"properties": s.Properties}
		if fix != nil {
			fix(root)
		}
		plainTypes(root)
		raw, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("tools: input schema of %s: %v", t.Name, err))
		}
		t.RawInputSchema = raw
	}
}

// outputSchema sets the tool's output schema from T, then applies fix
// (from schemas.json, when it holds the tool).
func outputSchema[T any](fix func(root schemaNode)) mcp.ToolOption {
	return func(t *mcp.Tool) {
		if g, ok := generated()[t.Name]; ok && g.Output != nil && !regenerate.Load() {
			t.RawOutputSchema = g.Output
			return
		}
		mcp.WithOutputSchema[T]()(t)
		if t.OutputSchema.Type != "object" {
			panic(fmt.Sprintf("tools: output schema of %s was not generated", t.Name))
		}
		if fix != nil {
			fix(schemaNode{"properties": t.OutputSchema.Properties})
		}
	}
}

// node returns the sub-schema at path, where each element is a property
// name, or "[]" for the items of an array. It panics when the path does not
// exist: the Go types changed and the fix must follow.
func node(root schemaNode, path ...string) schemaNode {
	cur := root
	for _, p := range path {
		var next any
		if p == "[]" {
			next = cur["items"]
		} else {
			props, _ := cur["properties"].(map[string]any)
			next = props[p]
		}
		n, ok := next.(map[string]any)
		if !ok {
			panic(fmt.Sprintf("tools: schema has no %v", path))
		}
		cur = n
	}
	return cur
}

// set merges fields into the sub-schema at path.
func set(root schemaNode, fields schemaNode, path ...string) {
	n := node(root, path...)
	for k, v := range fields {
		n[k] = v
	}
}

// freeObject marks the sub-schema at path as a JSON object with any members,
// keeping its description.
func freeObject(root schemaNode, path ...string) {
	n := node(root, path...)
	for k := range n {
		if k != "description" {
			delete(n, k)
		}
	}
	n["type"] = "object"
	n["additionalProperties"] = true
}

// idSchema is the rule for user, agent and thread ids (memory.ValidateID).
// Empty is allowed and means the default; "." and ".." match the pattern
// but are refused by the service.
func idSchema() schemaNode {
	return schemaNode{"type": "string", "pattern": idPattern, "maxLength": memory.MaxIDLength}
}

// nonEmptyIDSchema is idSchema for an id that, when given, may not be
// empty (forget_memory's).
func nonEmptyIDSchema() schemaNode {
	return schemaNode{"type": "string", "pattern": "^[A-Za-z0-9._-]+$", "minLength": 1, "maxLength": memory.MaxIDLength}
}

// idPattern is the pattern of ids in the schemas.
const idPattern = "^[A-Za-z0-9._-]*$"

// intRange makes the sub-schema at path a non-null integer in [lo, hi].
func intRange(root schemaNode, lo, hi int, path ...string) {
	set(root, schemaNode{"type": "integer", "minimum": lo, "maximum": hi}, path...)
}

// plainTypes rewrites, in the schema n and every schema below it, a type
// list into one type: a nullable type ["null", T] becomes T, and any other
// list becomes anyOf branches of one type each.
func plainTypes(n schemaNode) {
	if list, ok := n["type"].([]any); ok {
		n["type"] = typeNames(list)
	}
	if list, ok := n["type"].([]string); ok {
		var kept []string
		for _, t := range list {
			if t != "null" {
				kept = append(kept, t)
			}
		}
		switch len(kept) {
		case 0:
			delete(n, "type")
		case 1:
			n["type"] = kept[0]
		default:
			delete(n, "type")
			branches := make([]any, len(kept))
			for i, t := range kept {
				branches[i] = schemaNode{"type": t}
			}
			n["anyOf"] = branches
		}
	}
	for _, key := range []string{"properties", "$defs", "definitions"} {
		if m, ok := n[key].(map[string]any); ok {
			for _, v := range m {
				if sub, ok := v.(map[string]any); ok {
					plainTypes(sub)
				}
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := n[key].(map[string]any); ok {
			plainTypes(sub)
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := n[key].([]any); ok {
			for _, v := range list {
				if sub, ok := v.(map[string]any); ok {
					plainTypes(sub)
				}
			}
		}
	}
}

// typeNames returns the strings of a decoded type list.
func typeNames(list []any) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
