package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mnemo-mcp/mnemo/memory"
)

// maxProblems bounds the problems listed in one validation message.
const maxProblems = 5

// validator checks a tool's arguments against its input schema, with the
// JSON Schema library mcp-go's own validation uses, and words the problems
// for the model.
type validator struct {
	schema *jsonschema.Schema
	// nested maps an argument declared as an object or array to that type.
	nested map[string]string
	// names lists the tool's arguments, for messages.
	names []string
	// integers are the arguments declared as integers.
	integers map[string]bool
}

// inputSchemaJSON returns tool's input schema as JSON: the raw schema
// the tool was given, else its typed one encoded. It panics if that does
// not encode.
func inputSchemaJSON(tool mcp.Tool) json.RawMessage {
	if len(tool.RawInputSchema) > 0 {
		return tool.RawInputSchema
	}
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("tools: input schema of %s: %v", tool.Name, err))
	}
	return raw
}

// newValidator compiles tool's input schema. It panics if the schema does
// not compile.
func newValidator(tool mcp.Tool) *validator {
	raw := inputSchemaJSON(tool)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		panic(fmt.Sprintf("tools: input schema of %s: %v", tool.Name, err))
	}
	url := "mem:///mnemo/tools/" + tool.Name + ".json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tools: input schema of %s: %v", tool.Name, err))
	}
	schema, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tools: input schema of %s: %v", tool.Name, err))
	}
	v := &validator{schema: schema, nested: map[string]string{}, integers: map[string]bool{}}
	var s mcp.ToolInputSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(fmt.Sprintf("tools: input schema of %s: %v", tool.Name, err))
	}
	v.names = s.PropertyOrder
	for name, p := range s.Properties {
		m, ok := p.(map[string]any)
		switch {
		case ok && (m["type"] == "object" || m["type"] == "array"):
			v.nested[name] = m["type"].(string)
		case ok && m["type"] == "integer":
			v.integers[name] = true
		}
	}
	return v
}

// validate returns "" when raw satisfies the schema, else a message that
// names each offending argument and says what it must be.
func (v *validator) validate(raw json.RawMessage) string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "arguments: are not valid JSON"
	}
	err = v.schema.Validate(doc)
	if err == nil {
		return ""
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "arguments: " + err.Error()
	}
	var problems []string
	for _, unit := range leaves(verr.BasicOutput()) {
		for _, p := range v.describe(unit) {
			if !slices.Contains(problems, p) {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("and %d more", len(problems)-maxProblems))
	}
	return strings.Join(problems, "; ")
}

// leaves returns the output units that carry an error and no nested ones.
func leaves(u *jsonschema.OutputUnit) []jsonschema.OutputUnit {
	var out []jsonschema.OutputUnit
	var walk func(u jsonschema.OutputUnit)
	walk = func(u jsonschema.OutputUnit) {
		if len(u.Errors) == 0 && u.Error != nil {
			out = append(out, u)
		}
		for _, e := range u.Errors {
			walk(e)
		}
	}
	walk(*u)
	return out
}

// describe words one validation problem as "argument: what is wrong".
func (v *validator) describe(u jsonschema.OutputUnit) []string {
	at := argPath(u.InstanceLocation)
	switch k := u.Error.Kind.(type) {
	case *kind.Required:
		out := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			out[i] = join(at, m) + ": is required"
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]string, len(k.Properties))
		for i, p := range k.Properties {
			out[i] = join(at, p) + ": is not an argument of this tool"
			if at == "" {
				out[i] += "; its arguments are " + strings.Join(v.names, ", ")
			}
		}
		return out
	case *kind.Type:
		if at == "" {
			return []string{"arguments: got " + article(k.Got) + ", want an object of named arguments"}
		}
		if want := v.nested[at]; want != "" && k.Got == "string" {
			return []string{at + ": got a string that does not hold a JSON " + want + "; send the " + want + " itself"}
		}
		return []string{at + ": got " + article(k.Got) + ", want " + strings.Join(articles(k.Want), " or ")}
	case *kind.Minimum:
		return []string{at + ": " + rat(k.Got) + " is too small; the minimum is " + rat(k.Want)}
	case *kind.Maximum:
		return []string{at + ": " + rat(k.Got) + " is too large; the maximum is " + rat(k.Want)}
	case *kind.ExclusiveMinimum:
		return []string{at + ": " + rat(k.Got) + " is too small; it must be above " + rat(k.Want)}
	case *kind.ExclusiveMaximum:
		return []string{at + ": " + rat(k.Got) + " is too large; it must be below " + rat(k.Want)}
	case *kind.MinLength:
		if k.Want == 1 {
			return []string{at + ": must not be empty"}
		}
		return []string{fmt.Sprintf("%s: is %d characters long; use at least %d", at, k.Got, k.Want)}
	case *kind.MaxLength:
		return []string{fmt.Sprintf("%s: is %d characters long; use at most %d", at, k.Got, k.Want)}
	case *kind.Pattern:
		if k.Want == idPattern {
			return []string{fmt.Sprintf("%s: %q has characters other than letters a-z A-Z, digits, '.', '_' and '-'", at, memory.Echo(k.Got))}
		}
		return []string{fmt.Sprintf("%s: %q does not match %s", at, memory.Echo(k.Got), k.Want)}
	}
	if at == "" {
		at = "arguments"
	}
	return []string{at + ": " + u.Error.String()}
}

// argPath turns a JSON pointer into the argument path style of the memory
// package's messages: /messages/0/role → messages[0].role.
func argPath(pointer string) string {
	if pointer == "" {
		return ""
	}
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil && b.Len() > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// join appends a member name to an argument path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// article names a JSON type with its article: "a string", "an object".
func article(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func articles(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = article(t)
	}
	return out
}

// rat formats a number from the validator without exponent noise.
func rat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
