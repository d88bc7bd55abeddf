package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
)

var updateGolden = flag.Bool("update", false, "rewrite the settings table of docs/configuration.md")

// env is a fake environment for run and loadConfig.
type env map[string]string

func (e env) get(key string) string { return e[key] }

// baseEnv has a home directory so the default data_dir resolves.
func baseEnv(extra env) env {
	e := env{"HOME": "/home/maya"}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// writeFile writes a config file into a temp dir and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mnemo.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVersionAndUnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), []string{"version"}, env{}.get, nil, &stdout, &stderr); code != exitOK || !strings.HasPrefix(stdout.String(), "mnemo ") {
		t.Errorf("run(version) = %d, stdout %q", code, stdout.String())
	}
}

func TestRunDemo(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"demo", "--data-dir", dir}, baseEnv(nil).get, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("run(demo) = %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"<memory>", "</memory>", // an injection text
		"correction", "reinforcement", // signals were detected
		"stripped 1 <uploaded_files> block", "dropped 1 tool result", // the filter report
		"I use Go not Python", "Fly.io", // retrieval found the right exchanges
		"kept as fact_", "facts          7", // the host passed facts, and they are the memory
		"none is needed", // flush is honest: with no model the host is the extraction model
		"users/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output does not contain %q:\n%s", want, out)
		}
	}
	// Keyless is a complete mode: nothing is pending for a model that never comes.
	for _, bad := range []string{"pending", "waits for an LLM", "extraction waits", "OPENAI_API_KEY"} {
		if strings.Contains(out, bad) {
			t.Errorf("demo output says %q in the keyless mode:\n%s", bad, out)
		}
	}
	// The script sends an <uploaded_files> block; nothing retrieved may show it.
	if _, retrieved, _ := strings.Cut(out, "== retrieve_memory"); strings.Contains(retrieved, "lisbon_tides.csv") {
		t.Errorf("retrieval shows the uploaded file name; the filter should have removed it:\n%s", retrieved)
	}
	if _, err := os.Stat(filepath.Join(dir, "users")); err != nil {
		t.Errorf("--data-dir %s was not used: %v", dir, err)
	}
}

func TestRunDemoWithoutHome(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), []string{"demo"}, env{}.get, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("run(demo) without HOME = %d, want 0; stderr:\n%s", code, stderr.String())
	}
}

func TestRunDemoTemporaryDir(t *testing.T) {
	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	// MNEMO_DATA_DIR must not be used: the demo never writes into real memory
	// unless --data-dir says so.
	e := baseEnv(env{"HOME": home, "MNEMO_DATA_DIR": filepath.Join(home, "real")})
	if code := Run(t.Context(), []string{"demo"}, e.get, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("run(demo) = %d; stderr:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(home, "real")); !os.IsNotExist(err) {
		t.Errorf("demo wrote into MNEMO_DATA_DIR (stat err %v)", err)
	}
	if !strings.Contains(stdout.String(), "temporary") {
		t.Errorf("demo output does not say its data dir is temporary")
	}
}

func TestMCPJSONExampleMatchesREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "**Claude Desktop**")
	_, rest, ok2 := strings.Cut(rest, "```json\n")
	snippet, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no Claude Desktop JSON snippet")
	}
	example, err := os.ReadFile("../mcp.json.example")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(snippet), &a); err != nil {
		t.Fatalf("README snippet: %v", err)
	}
	if err := json.Unmarshal(example, &b); err != nil {
		t.Fatalf("mcp.json.example: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("mcp.json.example = %s, want the README's Claude Desktop snippet %s", example, snippet)
	}
}

// TestRunServe drives the real serve wiring in-process over pipes: the
// handshake, a tool call, and a clean exit when stdin closes.
func TestRunServe(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	stderr := &testutil.LockedBuffer{}
	code := make(chan int, 1)
	e := env{"MNEMO_DATA_DIR": t.TempDir()}
	go func() {
		code <- Run(t.Context(), []string{"serve"}, e.get, stdinR, stdoutW, stderr)
		stdoutW.Close()
	}()
	lines := bufio.NewScanner(stdoutR)
	request := func(id int, method string, params any) map[string]any {
		t.Helper()
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdinW.Write(append(msg, '\n')); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("%s: no response (stderr %q)", method, stderr.String())
		}
		var resp map[string]any
		if err := json.Unmarshal(lines.Bytes(), &resp); err != nil || resp["jsonrpc"] != "2.0" || resp["result"] == nil {
			t.Fatalf("%s: response %q is not a JSON-RPC result (%v)", method, lines.Text(), err)
		}
		return resp["result"].(map[string]any)
	}
	request(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	stdinW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	res := request(2, "tools/call", map[string]any{"name": "add_memory", "arguments": map[string]any{"user_input": "hi", "agent_response": "hello"}})
	if res["isError"] == true {
		t.Fatalf("add_memory = %v", res)
	}
	stdinW.Close()
	if c := <-code; c != exitOK {
		t.Errorf("run(serve) = %d after stdin EOF, want 0; stderr %q", c, stderr.String())
	}
	if lines.Scan() {
		t.Errorf("unexpected output after the last response: %q", lines.Text())
	}
}
