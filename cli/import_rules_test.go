package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/server/ui"
	"github.com/mnemo-mcp/mnemo/tools"
)

// badInput is one exchange, clean except for what a row of the table
// spoils; every way in must refuse the spoilt part with the same rule.
type badInput struct {
	user, thread, when, text, meta string
}

// cleanInput is the exchange every row starts from.
func cleanInput() badInput {
	return badInput{user: "ana", thread: "harbour", when: "2024-05-01T09:00:00Z", text: "Where do I keep the boat?", meta: `{"source":"chat"}`}
}

// importFormat writes in into a file (or directory) of one format and
// returns the arguments of mnemo import for it; nil when the format
// cannot carry what the row spoils.
type importFormat struct {
	name string
	// carries lists the fields of badInput the format stores.
	carries string
	write   func(t *testing.T, in badInput) []string
}

func writeRuleFile(t *testing.T, name string, v any) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

var importFormats = []importFormat{
	{"chatgpt", "user thread when text meta", func(t *testing.T, in badInput) []string {
		var meta map[string]string
		json.Unmarshal([]byte(in.meta), &meta)
		conv := hostileChatGPTConv(in.thread, meta["source"], "m1", float64(mustTime(t, in.when).Unix()))
		node := conv["mapping"].(map[string]any)["m1"].(map[string]any)["message"].(map[string]any)
		node["content"] = map[string]any{"content_type": "text", "parts": []string{in.text}}
		return []string{"--user", in.user, writeRuleFile(t, "conversations.json", []any{conv})}
	}},
	{"claude", "user thread when text meta", func(t *testing.T, in badInput) []string {
		var meta map[string]string
		json.Unmarshal([]byte(in.meta), &meta)
		conv := map[string]any{"uuid": in.thread, "name": meta["source"], "created_at": in.when, "chat_messages": []any{
			map[string]any{"uuid": "m1", "sender": "human", "created_at": in.when, "text": in.text},
			map[string]any{"uuid": "m2", "sender": "assistant", "created_at": in.when, "text": "In the marina."},
		}}
		return []string{"--user", in.user, writeRuleFile(t, "conversations.json", []any{conv})}
	}},
	{"memory-graph", "user text", func(t *testing.T, in badInput) []string {
		p := filepath.Join(t.TempDir(), "memory.jsonl")
		line, _ := json.Marshal(map[string]any{"type": "entity", "name": "user", "entityType": "person", "observations": []string{in.text}})
		if err := os.WriteFile(p, line, 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"--user", in.user, p}
	}},
	{"mnemo", "user thread when text meta", func(t *testing.T, in badInput) []string {
		return []string{writeRuleFile(t, "export.json", mnemoExportOf(t, in))}
	}},
	{"deerflow", "user when text", func(t *testing.T, in badInput) []string {
		return []string{"--user", in.user, writeRuleFile(t, "memory.json", deerFlowOf(in))}
	}},
	{"memoryos", "user thread when text meta", func(t *testing.T, in badInput) []string {
		root := t.TempDir()
		dir := filepath.Join(root, "users", in.user)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		page := map[string]any{"user_input": in.text, "agent_response": "In the marina.", "timestamp": in.when, "meta_data": json.RawMessage(in.meta)}
		data, _ := json.Marshal([]any{page})
		if err := os.WriteFile(filepath.Join(dir, "short_term.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"--thread", in.thread, root}
	}},
}

func mnemoExportOf(t *testing.T, in badInput) map[string]any {
	at := mustTime(t, in.when)
	return map[string]any{"format": "mnemo-export", "version": 1, "scopes": []any{map[string]any{
		"scope":    map[string]string{"user_id": in.user},
		"document": map[string]any{"version": "1.0", "facts": []any{}},
		"turns": []any{map[string]any{"id": "turn_1", "seq": 1, "thread_id": in.thread, "time": at, "stored": at,
			"user": in.text, "reply": "In the marina.", "meta_data": json.RawMessage(in.meta)}},
	}}}
}

func deerFlowOf(in badInput) map[string]any {
	return map[string]any{"version": "1.0", "facts": []any{map[string]any{"id": "fact_00000001", "content": in.text,
		"category": "context", "confidence": 0.9, "createdAt": in.when, "source": "chat"}}}
}

// TestImportRulesMatchAddMemory (issue 43): one table of bad inputs —
// credential-shaped ids, a time past 2200, a control character, a text
// over max_message_bytes, a control character in meta_data — goes to
// add_memory and to every import format (and the viewer's import): each
// refuses it with the same rule, and no way in stores the bad part.
// Before the engine's one write path, imports stored credential-shaped
// user ids, MemoryOS and mnemo export times past 2200 were worded as
// malformed, and an over-long chat message was not told by its limit.
func TestImportRulesMatchAddMemory(t *testing.T) {
	t.Parallel()
	token := "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"
	long := "Z" + strings.Repeat("long text ", memory.DefaultConfig().MaxMessageBytes/10+1)
	rows := []struct {
		name  string
		field string // the field of badInput spoilt
		spoil func(*badInput)
		want  string // in every refusal
		bad   []string
	}{
		{"credential as user id", "user", func(in *badInput) { in.user = token }, "looks like a credential", []string{token}},
		{"credential as thread id", "thread", func(in *badInput) { in.thread = token }, "looks like a credential", []string{token}},
		{"time past 2200", "when", func(in *badInput) { in.when = "2300-01-01T00:00:00Z" }, "out of range", []string{"2300-"}},
		{"control character", "text", func(in *badInput) { in.text = "Where\x1b[31m do I keep the boat?" }, "control character U+001B", []string{"\x1b", `\u001b`}},
		{"over-long text", "text", func(in *badInput) { in.text = long }, "the limit is", []string{long[:4096]}},
		{"control character in meta_data", "meta", func(in *badInput) { in.meta = `{"source":"chat\u001b]0;x\u0007"}` }, "control character U+001B", []string{"\x1b", `\u001b`}},
	}
	for _, row := range rows {
		in := cleanInput()
		row.spoil(&in)
		t.Run(row.name+"/add_memory", func(t *testing.T) {
			t.Parallel()
			text := addMemory(t, in)
			if !strings.Contains(text, row.want) {
				t.Errorf("add_memory = %q, want a refusal saying %q", text, row.want)
			}
		})
		for _, f := range importFormats {
			if !strings.Contains(f.carries, row.field) {
				continue
			}
			t.Run(row.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				args := append([]string{"import", "--format", f.name}, f.write(t, in)...)
				code, out, errOut := runCmd(t, dir, args...)
				if !strings.Contains(out+errOut, row.want) {
					t.Errorf("mnemo import (%s) = %d\n%s%s\nwant a refusal saying %q", f.name, code, out, errOut, row.want)
				}
				checkNotStored(t, dir, row.bad)
			})
		}
		for _, f := range []string{"mnemo", "deerflow"} {
			if f == "deerflow" && (row.field == "thread" || row.field == "meta") {
				continue
			}
			t.Run(row.name+"/viewer "+f, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				doc := mnemoExportOf(t, in)
				user := ""
				if f == "deerflow" {
					doc, user = deerFlowOf(in), in.user
				}
				data, _ := json.Marshal(doc)
				_, err := viewerImport(t, dir, ui.ImportRequest{Data: data, User: user})
				if err == nil || !strings.Contains(err.Error(), row.want) {
					t.Errorf("viewer import (%s) = %v, want a refusal saying %q", f, err, row.want)
				}
				checkNotStored(t, dir, row.bad)
			})
		}
	}
}

// checkNotStored fails when a file under dir holds one of bad.
func checkNotStored(t *testing.T, dir string, bad []string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, b := range bad {
			if bytes.Contains(data, []byte(b)) || strings.Contains(path, b) {
				t.Errorf("%s holds %q", path, memory.Echo(b))
			}
		}
		return nil
	})
}

// openTestService is a service over a file store in dir.
func openTestService(t *testing.T, dir string) *engine.Service {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tokens, err := tiktoken.NewLazy("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, tokens)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(t.Context()) })
	return svc
}

// viewerImport runs the viewer's import over a fresh store in dir.
func viewerImport(t *testing.T, dir string, req ui.ImportRequest) ([]string, error) {
	t.Helper()
	return uiImport(openTestService(t, dir), memory.DefaultConfig())(t.Context(), req)
}

// addMemory calls add_memory with in through an in-process MCP client
// and returns the result's text.
func addMemory(t *testing.T, in badInput) string {
	t.Helper()
	c, err := client.NewInProcessClient(tools.NewServer(openTestService(t, t.TempDir()), "test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		ClientInfo: mcp.Implementation{Name: "rules-test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "add_memory"
	req.Params.Arguments = map[string]any{"user_id": in.user, "thread_id": in.thread, "timestamp": in.when,
		"user_input": in.text, "agent_response": "In the marina.", "meta_data": json.RawMessage(in.meta)}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, part := range res.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if !res.IsError {
		return fmt.Sprintf("stored: %s", b.String())
	}
	return b.String()
}
