package tools

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestSchemasCurrent generates every tool's schemas from the Go types and
// checks that schemas.json, which the tools are built from, holds them
// (go test ./tools -update rewrites it).
func TestSchemasCurrent(t *testing.T) {
	regenerate.Store(true)
	defer regenerate.Store(false)
	want := map[string]toolSchemas{}
	for _, st := range All(nil) {
		out, err := json.Marshal(st.Tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		want[st.Tool.Name] = toolSchemas{Input: st.Tool.RawInputSchema, Output: out}
	}
	got, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("schemas.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var have map[string]toolSchemas
	if err := json.Unmarshal(schemasJSON, &have); err != nil {
		t.Fatalf("schemas.json: %v", err)
	}
	if len(have) != len(want) {
		t.Errorf("schemas.json holds %d tools, want %d (run go test ./tools -update)", len(have), len(want))
	}
	for name, w := range want {
		h := have[name]
		if !sameJSON(t, h.Input, w.Input) || !sameJSON(t, h.Output, w.Output) {
			t.Errorf("schemas.json is stale for %s (run go test ./tools -update)", name)
		}
	}
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	if err := json.Compact(&ca, a); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&cb, b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
