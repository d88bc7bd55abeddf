package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The release's metadata, as kept in the repository; the release workflow
// stamps one version into all three (.ci/stamp-release.mjs) and runs
// TestReleaseMetadata again.
const (
	serverJSON    = "server.json"                                // the MCP Registry entry
	npmManifest   = "npm/mnemo/package.json"                     // the npm launcher
	mcpbManifest  = "mcpb/manifest.json"                         // the MCP Bundle (mcpb/assemble.mjs)
	containerfile = "Containerfile"                              // the image, whose label the registry checks
	serverSchema  = ".ci/schemas/server.schema.2025-12-11.json"  // the registry's current schema, vendored
	mcpbSchema    = ".ci/schemas/mcpb-manifest-v0.4.schema.json" // @anthropic-ai/mcpb 2.1.2's current one
	configDoc     = "docs/configuration.md"                      // every setting's environment variable
	imageRepo     = "ghcr.io/mnemo-mcp/mnemo"                    // where the release pushes the image
	wantSchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
)

// TestReleaseMetadata validates server.json and the bundle manifest
// against their vendored schemas, offline, and checks that the registry
// entry, the npm package, the bundle and the image agree: one name, one
// version, environment variables that are settings.
func TestReleaseMetadata(t *testing.T) {
	server := readJSON(t, serverJSON)
	if err := compile(t, serverSchema).Validate(server); err != nil {
		t.Errorf("%s does not match %s: %v", serverJSON, serverSchema, err)
	}
	manifest := readJSON(t, mcpbManifest)
	if err := compile(t, mcpbSchema).Validate(manifest); err != nil {
		t.Errorf("%s does not match %s: %v", mcpbManifest, mcpbSchema, err)
	}
	for _, problem := range releaseProblems(server, readJSON(t, npmManifest), manifest, mustRead(t, containerfile), mustRead(t, configDoc)) {
		t.Error(problem)
	}
}

// TestReleaseMetadataRefuses shows the checks catching what the registry
// or a host would refuse: each case breaks one thing.
func TestReleaseMetadataRefuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		file   string // the file the change is made in
		change func(m map[string]any)
		schema bool // the schema catches it (else releaseProblems)
	}{
		{"npm version latest", serverJSON, func(m map[string]any) { pkg(m, "npm")["version"] = "latest" }, true},
		{"description too long", serverJSON, func(m map[string]any) { m["description"] = strings.Repeat("memory ", 20) }, true},
		{"name without a namespace", serverJSON, func(m map[string]any) { m["name"] = "mnemo" }, true},
		{"bundle manifest_version", mcpbManifest, func(m map[string]any) { m["manifest_version"] = "0.2" }, true},
		{"bundle server type", mcpbManifest, func(m map[string]any) { m["server"].(map[string]any)["type"] = "go" }, true},
		{"npm version differs", serverJSON, func(m map[string]any) { pkg(m, "npm")["version"] = "9.9.9" }, false},
		{"image tag differs", serverJSON, func(m map[string]any) { pkg(m, "oci")["identifier"] = imageRepo + ":latest" }, false},
		{"npm package renamed", serverJSON, func(m map[string]any) { pkg(m, "npm")["identifier"] = "mnemo" }, false},
		{"server renamed", serverJSON, func(m map[string]any) { m["name"] = "io.github.someone/mnemo" }, false},
		{"bundle version differs", mcpbManifest, func(m map[string]any) { m["version"] = "9.9.9" }, false},
		{"api key not sensitive", mcpbManifest, func(m map[string]any) { userConfig(m, "llm_api_key")["sensitive"] = false }, false},
		{"unknown variable", mcpbManifest, func(m map[string]any) { mcpEnv(m)["MNEMO_NO_SUCH"] = "x" }, false},
		{"npm package not stdio", serverJSON, func(m map[string]any) {
			pkg(m, "npm")["transport"] = map[string]any{"type": "sse", "url": "http://localhost/sse"}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs := map[string]map[string]any{serverJSON: readJSON(t, serverJSON), mcpbManifest: readJSON(t, mcpbManifest)}
			tt.change(docs[tt.file])
			schema := serverSchema
			if tt.file == mcpbManifest {
				schema = mcpbSchema
			}
			schemaErr := compile(t, schema).Validate(docs[tt.file])
			problems := releaseProblems(docs[serverJSON], readJSON(t, npmManifest), docs[mcpbManifest], mustRead(t, containerfile), mustRead(t, configDoc))
			if tt.schema && schemaErr == nil {
				t.Errorf("%s passes its schema after the change", tt.file)
			}
			if !tt.schema && len(problems) == 0 {
				t.Errorf("releaseProblems() finds nothing after the change")
			}
		})
	}
}

// releaseProblems is every disagreement between the registry entry, the
// npm launcher's package.json, the bundle manifest, the Containerfile and
// the settings documented in docs/configuration.md.
func releaseProblems(server, npm, manifest map[string]any, image, settingsDoc []byte) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	name, _ := server["name"].(string)
	version, _ := server["version"].(string)
	if server["$schema"] != wantSchemaURL {
		bad("%s: $schema is %v, want the current %s", serverJSON, server["$schema"], wantSchemaURL)
	}
	if npm["mcpName"] != name {
		bad("%s: mcpName is %v, want %s's name %q (the registry checks it)", npmManifest, npm["mcpName"], serverJSON, name)
	}
	if !bytes.Contains(image, []byte(`io.modelcontextprotocol.server.name="`+name+`"`)) {
		bad("%s: no label io.modelcontextprotocol.server.name=%q (the registry checks it)", containerfile, name)
	}
	if npm["version"] != version {
		bad("%s: version %v, want %s's %q", npmManifest, npm["version"], serverJSON, version)
	}
	if manifest["version"] != version {
		bad("%s: version %v, want %s's %q", mcpbManifest, manifest["version"], serverJSON, version)
	}
	if manifest["name"] != "mnemo" {
		bad("%s: name %v, want mnemo", mcpbManifest, manifest["name"])
	}
	transports := map[string]bool{}
	registries := map[string]bool{}
	packages, _ := server["packages"].([]any)
	for i, p := range packages {
		p, _ := p.(map[string]any)
		kind, _ := p["registryType"].(string)
		registries[kind] = true
		if tr, ok := p["transport"].(map[string]any); ok {
			transports[fmt.Sprint(tr["type"])] = true
		}
		switch kind {
		case "npm":
			if p["identifier"] != npm["name"] || p["version"] != version {
				bad("%s: packages[%d] is %v@%v, want %v@%s", serverJSON, i, p["identifier"], p["version"], npm["name"], version)
			}
			if tr, _ := p["transport"].(map[string]any); tr["type"] != "stdio" {
				bad("%s: packages[%d], the npm launcher, serves stdio, not %v", serverJSON, i, tr["type"])
			}
		case "oci":
			if p["identifier"] != imageRepo+":"+version {
				bad("%s: packages[%d] is %v, want %s:%s", serverJSON, i, p["identifier"], imageRepo, version)
			}
		}
		vars, _ := p["environmentVariables"].([]any)
		for _, v := range vars {
			v, _ := v.(map[string]any)
			if !isSetting(settingsDoc, fmt.Sprint(v["name"])) {
				bad("%s: packages[%d] sets %v, which is no setting's variable in %s", serverJSON, i, v["name"], configDoc)
			}
		}
	}
	for _, want := range []string{"npm", "oci"} {
		if !registries[want] {
			bad("%s: no %s package", serverJSON, want)
		}
	}
	for _, want := range []string{"stdio", "streamable-http"} {
		if !transports[want] {
			bad("%s: no package with the %s transport", serverJSON, want)
		}
	}
	for key, value := range mcpEnv(manifest) {
		if !isSetting(settingsDoc, key) {
			bad("%s: mcp_config sets %s, which is no setting's variable in %s", mcpbManifest, key, configDoc)
		}
		if ref, ok := strings.CutPrefix(fmt.Sprint(value), "${user_config."); ok {
			if userConfig(manifest, strings.TrimSuffix(ref, "}")) == nil {
				bad("%s: %s refers to user_config.%s, which is not declared", mcpbManifest, key, strings.TrimSuffix(ref, "}"))
			}
		}
	}
	if c := userConfig(manifest, "data_dir"); c == nil || c["type"] != "directory" {
		bad("%s: user_config.data_dir is not a directory field", mcpbManifest)
	}
	for _, key := range []string{"llm_base_url", "llm_api_key"} {
		if c := userConfig(manifest, key); c == nil || c["required"] == true {
			bad("%s: user_config.%s is missing or required; it is optional", mcpbManifest, key)
		}
	}
	if c := userConfig(manifest, "llm_api_key"); c == nil || c["sensitive"] != true {
		bad("%s: user_config.llm_api_key is not sensitive", mcpbManifest)
	}
	return out
}

// isSetting reports whether name is an environment variable of a setting:
// a row of docs/configuration.md's settings table names it in backquotes.
func isSetting(settingsDoc []byte, name string) bool {
	for line := range strings.SplitSeq(string(settingsDoc), "\n") {
		if strings.HasPrefix(line, "| `") && strings.Contains(line, "`"+name+"`") {
			return true
		}
	}
	return false
}

func pkg(server map[string]any, registryType string) map[string]any {
	for _, p := range server["packages"].([]any) {
		if p := p.(map[string]any); p["registryType"] == registryType {
			return p
		}
	}
	return nil
}

func userConfig(manifest map[string]any, key string) map[string]any {
	c, _ := manifest["user_config"].(map[string]any)
	v, _ := c[key].(map[string]any)
	return v
}

func mcpEnv(manifest map[string]any) map[string]any {
	s, _ := manifest["server"].(map[string]any)
	c, _ := s["mcp_config"].(map[string]any)
	env, _ := c["env"].(map[string]any)
	return env
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustRead(t, path), &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// compile compiles a vendored schema. Formats (uri, email) are asserted,
// as the registry does.
func compile(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustRead(t, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "file:///mnemo/" + path
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return s
}
