package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const e2eSecret = "sk-proj-Zq8vN3kT5wX2yB7mR4pL9sD1fG6hJ0cA"

// filesHolding lists the files under dir whose bytes contain s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), s) {
			hits = append(hits, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestE2ESecretsRedacted: an OpenAI key said in a conversation, through
// the built binary, is in no file of the data directory after the server
// has shut down and does not come back from retrieve_memory; with
// redact_secrets off it is kept, so the setting reaches the server.
func TestE2ESecretsRedacted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		kept bool
	}{
		{"default", nil, false},
		{"redact_secrets off", []string{"MNEMO_REDACT_SECRETS=false"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			srv := startServer(t, dir, tc.env...)
			srv.initialize(ctx)
			var added struct {
				TurnIDs  []string `json:"turn_ids"`
				Redacted []struct {
					Kind  string `json:"kind"`
					Count int    `json:"count"`
				} `json:"redacted"`
			}
			if err := srv.tool(ctx, "add_memory", map[string]any{
				"user_input":     "Here is my OpenAI API key: " + e2eSecret + " - use it for the deploy script.",
				"agent_response": "Understood, I will use it for the deploy script.",
			}, &added); err != nil {
				t.Fatal(err)
			}
			if got := len(added.Redacted) == 1 && added.Redacted[0].Kind == "openai api key"; got == tc.kept {
				t.Errorf("add_memory redacted = %+v", added.Redacted)
			}
			raw, err := srv.call(ctx, "tools/call", map[string]any{"name": "retrieve_memory", "arguments": map[string]any{"query": "what is my OpenAI API key for the deploy script?"}})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), e2eSecret) != tc.kept {
				t.Errorf("retrieve_memory result holds the key: %v, want %v\n%s", !tc.kept, tc.kept, raw)
			}
			if code := srv.stop(); code != 0 {
				t.Errorf("exit code %d", code)
			}
			if hits := filesHolding(t, dir, e2eSecret); (len(hits) > 0) != tc.kept {
				t.Errorf("files holding the key: %v; want kept = %v", hits, tc.kept)
			}
		})
	}
}

// rawToolCall sends a tools/call whose line is written byte for byte (it
// may hold invalid UTF-8) and returns the result's isError and text.
func (s *mnemoProc) rawToolCall(ctx context.Context, line string) (bool, string) {
	s.t.Helper()
	id := fmt.Sprint(s.nextID.Add(1))
	ch := make(chan rpcMessage, 1)
	s.mu.Lock()
	s.pending[id] = ch
	s.mu.Unlock()
	s.writeMu.Lock()
	_, err := s.stdin.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + line + "}\n"))
	s.writeMu.Unlock()
	if err != nil {
		s.t.Fatal(err)
	}
	var m rpcMessage
	select {
	case m = <-ch:
	case <-s.done:
		s.t.Fatal("server closed stdout")
	case <-ctx.Done():
		s.t.Fatal(ctx.Err())
	}
	if m.Error != nil {
		s.t.Fatalf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
		s.t.Fatalf("result %s: %v", m.Result, err)
	}
	return res.IsError, res.Content[0].Text
}

// TestE2EInvalidText: over real stdio, text holding invalid UTF-8 bytes or
// a lone surrogate escape (which JSON decoding turns into U+FFFD before
// any tool sees it) and control characters are refused with an isError
// naming the field, and nothing is stored.
func TestE2EInvalidText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	srv := startServer(t, dir)
	srv.initialize(ctx)
	for _, tc := range []struct{ name, params, field string }{
		{"invalid UTF-8 bytes", "{\"name\":\"add_memory\",\"arguments\":{\"user_input\":\"caf\xe9 au lait\",\"agent_response\":\"ok\"}}", "user_input"},
		{"lone surrogate escape", `{"name":"add_memory","arguments":{"user_input":"ok","agent_response":"half \udc00 a pair"}}`, "agent_response"},
		{"surrogate pair reversed", `{"name":"add_memory","arguments":{"messages":[{"role":"user","content":"\udc00\ud800"}]}}`, "messages[0].content"},
		{"save_memory invalid UTF-8", "{\"name\":\"save_memory\",\"arguments\":{\"content\":\"Likes \xff\xfe tea\"}}", "content"},
		{"save_memory lone surrogate", `{"name":"save_memory","arguments":{"content":"Likes \ud83d tea"}}`, "content"},
		{"save_memory OSC 52", `{"name":"save_memory","arguments":{"content":"Likes \u001b]52;c;ZXZpbA==\u0007 tea"}}`, "content"},
		{"save_memory C1 CSI", `{"name":"save_memory","arguments":{"content":"Likes \u009b2J tea"}}`, "content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isErr, text := srv.rawToolCall(ctx, tc.params)
			if !isErr || !strings.Contains(text, tc.field+":") {
				t.Errorf("isError = %v, text %q; want an error naming %s", isErr, text, tc.field)
			}
		})
	}
	if isErr, text := srv.rawToolCall(ctx, `{"name":"save_memory","arguments":{"content":"Likes \ud83c\udf75 tea"}}`); isErr {
		t.Errorf("a valid surrogate pair was refused: %s", text)
	}
	srv.stop()
	if _, err := os.Stat(filepath.Join(dir, "users", "default", "turns.jsonl")); err == nil {
		t.Error("a refused add_memory stored a turn")
	}
	if hits := filesHolding(t, dir, "\ufffd"); len(hits) > 0 {
		t.Errorf("U+FFFD stored in %v", hits)
	}
}

// TestImportLimits: mnemo import applies the tools' rules, names the
// record it refuses and writes nothing; secrets are redacted.
func TestImportLimits(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, doc, turns string) string {
		p := filepath.Join(t.TempDir(), "export.json")
		data := `{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"bob"},"document":` + doc + `,"turns":` + turns + `}]}`
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fact := func(content string) string {
		c, _ := json.Marshal(content)
		return `{"id":"fact_00000001","content":` + string(c) + `,"category":"context","confidence":0.9,"createdAt":"2026-01-01T00:00:00Z","source":"t1"}`
	}
	facts := func(fs ...string) string { return `{"version":"1.0","facts":[` + strings.Join(fs, ",") + `]}` }
	many := make([]string, 100_000)
	for i := range many {
		many[i] = fact(fmt.Sprintf("fact number %d", i))
	}
	deep := strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500)
	for _, tc := range []struct{ name, doc, turns, want string }{
		{"fact of 5 MB", facts(fact(strings.Repeat("x", 5<<20))), `[]`, "bob: facts[0].content: is 5242880 characters long"},
		{"100,000 facts", facts(many...), `[]`, "bob: facts: holds 100000 entries; max_facts is 100"},
		{"ESC in a fact", facts(fact("ok"), fact("red \u001b[31m")), `[]`, "bob: facts[1].content: contains control character U+001B"},
		{"OSC 52 in a turn", `null`, `[{"id":"turn_1","seq":1,"thread_id":"t","user":"x\u001b]52;c;ZXZpbA==\u0007"}]`, "bob: turns[0] (turn_1).user: contains control character U+001B"},
		{"meta_data 500 levels deep", `null`, `[{"id":"turn_1","seq":1,"thread_id":"t","user":"x","meta_data":` + deep + `}]`, "bob: turns[0] (turn_1).meta_data: is nested more than 32 levels deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := runEnv(t, dataEnv(dir), "import", write(t, tc.doc, tc.turns))
			if code != exitError || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing imported") {
				t.Errorf("import = %d %q %q, want exit %d naming %q", code, out, clipBytes([]byte(errOut), 300), exitError, tc.want)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 0 {
				t.Errorf("a refused import left %d scopes", len(entries))
			}
		})
	}
	t.Run("secret redacted", func(t *testing.T) {
		dir := t.TempDir()
		code, out, errOut := runEnv(t, dataEnv(dir), "import", write(t, facts(fact("Deploy key "+e2eSecret)),
			`[{"id":"turn_1","seq":1,"thread_id":"t","user":"my key is `+e2eSecret+`","meta_data":{"k":"`+e2eSecret+`"}}]`))
		if code != exitOK || !strings.Contains(out, "secrets replaced by [redacted: KIND]: 3 openai api key") || strings.Contains(out+errOut, e2eSecret) {
			t.Fatalf("import = %d %q %q", code, out, errOut)
		}
		if hits := filesHolding(t, dir, e2eSecret); len(hits) > 0 {
			t.Errorf("imported key stored in %v", hits)
		}
	})
}
