package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestNormalize(t *testing.T) {
	v := newValidator(AddMemory(nil).Tool)
	tests := []struct {
		name, in, want string
	}{
		{"nothing to do", `{"user_input": "hi", "thread_id": "t"}`, `{"user_input": "hi", "thread_id": "t"}`},
		{"null argument dropped", `{"user_input": "hi", "thread_id": null}`, `{"user_input": "hi"}`},
		{"stringified object decoded", `{"meta_data": "{\"a\": [1, null]}"}`, `{"meta_data": {"a": [1, null]}}`},
		{"stringified array decoded", `{"messages": " [{\"role\": \"user\", \"content\": \"hi\"}]"}`, `{"messages": [{"role": "user", "content": "hi"}]}`},
		{"string that is no object kept", `{"meta_data": "hello"}`, `{"meta_data": "hello"}`},
		{"stringified array for an object kept", `{"meta_data": "[1]"}`, `{"meta_data": "[1]"}`},
		{"broken JSON string kept", `{"meta_data": "{\"a\":"}`, `{"meta_data": "{\"a\":"}`},
		{"plain string argument kept", `{"user_input": "{\"a\": 1}"}`, `{"user_input": "{\"a\": 1}"}`},
		{"nulls inside messages dropped", `{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": null, "function": {"name": "f", "arguments": "{}"}}]}]}`,
			`{"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]}`},
		{"numbers inside messages kept exactly", `{"messages": [{"role": "assistant", "content": null, "x": 12345678901234567890, "y": 1e2}]}`,
			`{"messages": [{"role": "assistant", "x": 12345678901234567890, "y": 1e2}]}`},
		{"nulls inside meta_data kept", `{"meta_data": {"a": null}}`, `{"meta_data": {"a": null}}`},
		{"not an object", `[1, 2]`, `[1, 2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixed, names := v.normalize(json.RawMessage(tt.in))
			if !jsonEqual(t, fixed, tt.want) {
				t.Errorf("normalize(%s) = %s, want %s", tt.in, fixed, tt.want)
			}
			// The names handed to bind are those of what normalize
			// returns: a null argument dropped is no name to check.
			var want map[string]json.RawMessage
			if json.Unmarshal(fixed, &want) != nil {
				if names != nil {
					t.Errorf("normalize(%s) names = %v, want none for a non-object", tt.in, names)
				}
				return
			}
			if len(names) != len(want) {
				t.Errorf("normalize(%s) names = %v, want the %d of %s", tt.in, names, len(want), fixed)
			}
			for _, n := range names {
				if _, ok := want[n]; !ok {
					t.Errorf("normalize(%s) names %v hold %q, not in %s", tt.in, names, n, fixed)
				}
			}
		})
	}
}

// jsonEqual reports whether two JSON texts are equal up to whitespace and
// member order, comparing numbers by their text.
func jsonEqual(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	canon := func(s []byte) string {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(s)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s is not JSON: %v", s, err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	return canon(a) == canon([]byte(b))
}

func TestBind(t *testing.T) {
	type inner struct {
		Role string `json:"role"`
	}
	type args struct {
		N     int     `json:"n,omitempty"`
		Items []inner `json:"items,omitempty"`
	}
	tests := []struct {
		in   string
		want string // "" for success
	}{
		{`{"n": 3, "items": [{"role": "user", "extra": true}]}`, ""},
		{`{"n": "3"}`, "n: got JSON string, want an integer in range"},
		{`{"n": 1e40}`, "n: got JSON number 1e40, want an integer in range"},
		{`{"items": [{"role": 7}]}`, "items.role: got JSON number, want a string"},
		{`{"m": 1}`, "m: is not an argument of this tool; its arguments are n, items"},
		{`{"N": 1}`, "N: is not an argument of this tool"},
		{`"text"`, "arguments: got JSON string, want an object of named arguments"},
	}
	for _, tt := range tests {
		var a args
		got := bind(json.RawMessage(tt.in), nil, &a)
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("bind(%s) = %q, want %q", tt.in, got, tt.want)
		}
		// Given the names normalize read, bind answers as when it reads them.
		var top map[string]json.RawMessage
		var names []string
		if json.Unmarshal([]byte(tt.in), &top) == nil {
			for n := range top {
				names = append(names, n)
			}
		}
		var b args
		if got2 := bind(json.RawMessage(tt.in), names, &b); got2 != got {
			t.Errorf("bind(%s, %v) = %q, want %q as without the names", tt.in, names, got2, got)
		}
	}
}

func TestRawArguments(t *testing.T) {
	tests := []struct {
		name string
		args any
		raw  json.RawMessage
		want string
	}{
		{"none", nil, nil, `{}`},
		{"null", nil, json.RawMessage(`null`), `{}`},
		{"raw", nil, json.RawMessage(`{"a":1}`), `{"a":1}`},
		{"map", map[string]any{"a": 1}, nil, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req mcp.CallToolRequest
			req.Params.Arguments = tt.args
			req.Params.RawArguments = tt.raw
			got, err := rawArguments(req)
			if err != nil || string(got) != tt.want {
				t.Errorf("rawArguments() = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestArgPath(t *testing.T) {
	tests := map[string]string{
		"":                 "",
		"/query":           "query",
		"/messages/0/role": "messages[0].role",
		"/messages/12/tool_calls/3/function/name": "messages[12].tool_calls[3].function.name",
		"/meta_data/a~1b~0c":                      "meta_data.a/b~c",
	}
	for in, want := range tests {
		if got := argPath(in); got != want {
			t.Errorf("argPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestToolSchemasCompile compiles the input schema of every tool: typed
// compiles them on first use only.
func TestToolSchemasCompile(t *testing.T) {
	for _, st := range All(nil) {
		t.Run(st.Tool.Name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("input schema does not compile: %v", r)
				}
			}()
			if v := newValidator(st.Tool); v.schema == nil {
				t.Fatal("no schema compiled")
			}
		})
	}
}
