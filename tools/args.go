package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

// How a tool call's arguments reach a handler, in order:
//
//  1. normalize: optional arguments sent as null are dropped, as if left
//     out, and so are null members of the objects inside an array argument
//     (OpenAI messages carry "content": null, "tool_calls": null); an
//     argument declared as an object or array but sent as a JSON string
//     (some clients stringify nested values) is replaced by the value the
//     string holds, when it holds one of that kind; an argument declared as
//     an integer and sent as an integral number written with a fraction or
//     an exponent (7.0, 1e2, which JSON Schema counts as integers) is
//     rewritten as the integer. Free objects such as meta_data are kept
//     exactly as sent.
//  2. validate against the tool's input schema (validate.go).
//  3. confine to the caller: over an authenticated transport the scope
//     (user_id, agent_name) comes from the caller's credential, and a call
//     naming another user's memory is refused here (caller.go).
//  4. decode into the tool's argument struct.
//
// Each step that fails answers with an isError result that names the
// argument. This replaces mcp.NewTypedToolHandler and
// server.WithInputSchemaValidation, whose messages name Go types ("cannot
// unmarshal string into Go struct field addArgs.max_results of type int")
// or print validator internals ("/max_results: &{Got:0/1 Want:1/1}").

// typed pairs tool with a handler that takes decoded arguments of type T.
// The input schema is compiled on the tool's first call or by
// warmValidators, whichever comes first, not at start-up (compiling every
// schema is a third of a server's start); a schema that does not compile
// panics there, a bug TestToolSchemasCompile catches.
func typed[T any](tool mcp.Tool, handle func(ctx context.Context, req mcp.CallToolRequest, args T) (*mcp.CallToolResult, error)) server.ServerTool {
	validator := validatorOf(tool)
	scoped := slices.Contains(argNames(reflect.TypeFor[T]()), "user_id")
	return server.ServerTool{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		check := validator()
		raw, err := rawArguments(req)
		if err != nil {
			return argumentError("arguments: cannot be read: " + err.Error())
		}
		raw, names := check.normalize(raw)
		if msg := check.validate(raw); msg != "" {
			return argumentError(msg)
		}
		confined, msg := confineArguments(ctx, raw, scoped)
		if !sameBytes(confined, raw) {
			names = nil // confinement rewrote them: bind reads the names anew
		}
		raw = confined
		if msg != "" {
			return mcp.NewToolResultError("not allowed: " + msg), nil
		}
		var args T
		if msg := bind(raw, names, &args); msg != "" {
			return argumentError(msg)
		}
		// Every change a tool makes is the assistant's (the fact history
		// says so), but for the person's own in the memory view (app.go).
		actor := memory.ActorAssistant
		if fromView(ctx, req) {
			actor = memory.ActorViewer
		}
		return handle(memory.WithActor(ctx, actor), req, args)
	}}
}

// validators holds, per tool name and input schema, the compiled
// validator made once for every server of the process (the tests make
// many).
var validators sync.Map // string → func() *validator

// validatorOf returns the function that compiles tool's input schema once
// and returns its validator.
func validatorOf(tool mcp.Tool) func() *validator {
	key := tool.Name + "\x00" + string(inputSchemaJSON(tool))
	if v, ok := validators.Load(key); ok {
		return v.(func() *validator)
	}
	v, _ := validators.LoadOrStore(key, sync.OnceValue(func() *validator { return newValidator(tool) }))
	return v.(func() *validator)
}

// warmValidators compiles the input schemas of tools not yet called, so
// that the first call of each (the first retrieval of a conversation) does
// not wait for its schema: NewServer runs it once the client is
// initialized, beside the client's first requests.
func warmValidators(tools []server.ServerTool) {
	for _, t := range tools {
		validatorOf(t.Tool)()
	}
}

// rawArguments returns the call's arguments as JSON; no arguments is {}.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	var raw json.RawMessage
	switch a := req.GetRawArguments().(type) {
	case json.RawMessage:
		raw = a
	case nil:
	default:
		var err error
		if raw, err = json.Marshal(a); err != nil {
			return nil, err
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), nil
	}
	return raw, nil
}

// normalize applies step 1 to the arguments; anything it cannot read is
// returned unchanged for validation to report. It also returns the
// top-level argument names it read (nil when raw is not an object), so
// that bind need not decode the arguments once more to check them.
func (v *validator) normalize(raw json.RawMessage) (json.RawMessage, []string) {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil || args == nil {
		return raw, nil
	}
	raw = v.normalizeArgs(raw, args)
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	return raw, names
}

// normalizeArgs is normalize on the decoded arguments of raw; it drops
// null arguments from args as well.
func (v *validator) normalizeArgs(raw json.RawMessage, args map[string]json.RawMessage) json.RawMessage {
	changed := false
	for name, val := range args {
		if string(val) == "null" {
			delete(args, name)
			changed = true
			continue
		}
		if v.integers[name] {
			if n, ok := integral(val); ok {
				args[name] = n
				changed = true
			}
			continue
		}
		kind := v.nested[name]
		if kind != "" && val[0] == '"' {
			if inner, ok := decodeStringified(val, kind); ok {
				args[name], val = inner, inner
				changed = true
			}
		}
		if kind == "array" && val[0] == '[' {
			if cleaned, ok := dropNullMembers(val); ok {
				args[name] = cleaned
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	fixed, err := json.Marshal(args)
	if err != nil {
		return raw
	}
	return fixed
}

// integral returns the JSON number v written as an integer when v is an
// integral number written with a fraction or an exponent (7.0, 1e2,
// 2.5e1) of at most 18 digits. It works on the digits, not a
// float, so 7.0000000000000000001 is not taken for 7, and a huge exponent
// costs nothing.
func integral(v json.RawMessage) (json.RawMessage, bool) {
	s := string(bytes.TrimSpace(v))
	if !strings.ContainsAny(s, ".eE") || !json.Valid([]byte(s)) || s[0] == '"' {
		return nil, false
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := 0
	if hasExp {
		if len(strings.TrimLeft(expPart, "+-")) > 6 {
			return nil, false
		}
		var err error
		if exp, err = strconv.Atoi(expPart); err != nil {
			return nil, false
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	exp -= len(frac)
	for strings.HasSuffix(digits, "0") {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	switch {
	case digits == "":
		return json.RawMessage("0"), true
	case exp < 0 || len(digits)+exp > 18:
		return nil, false
	}
	return json.RawMessage(sign + digits + strings.Repeat("0", exp)), true
}

// decodeStringified returns the JSON held by the JSON string v when it is a
// value of kind ("object" or "array").
func decodeStringified(v json.RawMessage, kind string) (json.RawMessage, bool) {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil, false
	}
	inner := bytes.TrimSpace([]byte(s))
	open := byte('{')
	if kind == "array" {
		open = '['
	}
	if len(inner) == 0 || inner[0] != open || !json.Valid(inner) {
		return nil, false
	}
	return json.RawMessage(inner), true
}

// dropNullMembers removes the null members of every object inside the JSON
// array v, at any depth. It reports whether anything was removed.
func dropNullMembers(v json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(v, []byte("null")) {
		return nil, false
	}
	var items any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber() // numbers are re-encoded exactly as sent
	if dec.Decode(&items) != nil || !pruneNulls(items) {
		return nil, false
	}
	out, err := json.Marshal(items)
	if err != nil {
		return nil, false
	}
	return out, true
}

// pruneNulls deletes null object members under v, reporting any deletion.
func pruneNulls(v any) bool {
	pruned := false
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			if m == nil {
				delete(x, k)
				pruned = true
			} else if pruneNulls(m) {
				pruned = true
			}
		}
	case []any:
		for _, m := range x {
			if pruneNulls(m) {
				pruned = true
			}
		}
	}
	return pruned
}

// bind decodes validated arguments into target, a pointer to a struct.
// Unknown top-level names are refused (the schema refuses them too; this
// keeps a handler safe without it); unknown members of nested objects are
// ignored, as chat logs carry fields mnemo does not use. It returns "" on
// success, else a message that starts with the argument name. names are
// raw's top-level names when the caller has read them (nil: bind reads
// them).
func bind(raw json.RawMessage, names []string, target any) string {
	if names == nil {
		var top map[string]json.RawMessage
		if json.Unmarshal(raw, &top) == nil {
			for name := range top {
				names = append(names, name)
			}
		}
	}
	if len(names) > 0 {
		known := argNames(reflect.TypeOf(target).Elem())
		for _, name := range names {
			if !slices.Contains(known, name) {
				return name + ": is not an argument of this tool; its arguments are " + strings.Join(known, ", ")
			}
		}
	}
	err := json.Unmarshal(raw, target)
	if err == nil {
		return ""
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Sprintf("arguments: got JSON %s, want an object of named arguments", typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("%s: got JSON %s, want %s", typeErr.Field, typeErr.Value, jsonKind(typeErr.Type))
	}
	return "arguments: cannot be decoded: " + err.Error()
}

// sameBytes reports whether a and b are the same slice.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// argNames lists the JSON names of a struct's fields, in field order.
func argNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// jsonKind names the JSON value a Go type decodes from, for messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}
