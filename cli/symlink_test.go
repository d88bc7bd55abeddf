package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
)

// TestCLISymlinks plants each link of the red-team report into a data
// directory (as a cloned repository could bring it) and runs every command
// that touches the data directory against it: nothing outside the data
// directory is read into output, written, truncated or deleted.
func TestCLISymlinks(t *testing.T) {
	t.Parallel()
	plants := []struct {
		name  string
		plant func(t *testing.T, data, outside string)
	}{
		{"agents dir", func(t *testing.T, data, outside string) {
			os.MkdirAll(filepath.Join(outside, "dir1"), 0o700)
			os.WriteFile(filepath.Join(outside, "dir1", "precious.txt"), []byte("keep me"), 0o600)
			mustSymlink(t, outside, filepath.Join(data, "users", "bob", "agents"))
		}},
		{"turn log", func(t *testing.T, data, outside string) {
			os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("no trailing newline"), 0o600)
			mustSymlink(t, filepath.Join(outside, "notes.txt"), filepath.Join(data, "users", "bob", "turns.jsonl"))
		}},
		{"versions dir", func(t *testing.T, data, outside string) {
			os.WriteFile(filepath.Join(outside, "memory.1.json"), []byte(`{"facts":[]}`), 0o600)
			mustSymlink(t, outside, filepath.Join(data, "users", "bob", "versions"))
		}},
		{"memory document", func(t *testing.T, data, outside string) {
			os.WriteFile(filepath.Join(outside, "memory.json"), []byte(`{"version":"1.0","facts":[{"id":"fact_outside","content":"OUTSIDE-FACT","category":"context","confidence":0.9}]}`), 0o600)
			mustSymlink(t, filepath.Join(outside, "memory.json"), filepath.Join(data, "users", "bob", "memory.json"))
		}},
		{"lock file", func(t *testing.T, data, outside string) {
			mustSymlink(t, filepath.Join(outside, "lockfile"), filepath.Join(data, "users", "bob", ".lock"))
		}},
		{"user dir", func(t *testing.T, data, outside string) {
			os.RemoveAll(filepath.Join(data, "users", "bob"))
			os.WriteFile(filepath.Join(outside, "turns.jsonl"), []byte("OUTSIDE-TURN"), 0o600)
			mustSymlink(t, outside, filepath.Join(data, "users", "bob"))
		}},
		{"page index", func(t *testing.T, data, outside string) {
			os.WriteFile(filepath.Join(outside, "x.idx"), []byte("OUTSIDE-INDEX"), 0o600)
			mustSymlink(t, filepath.Join(outside, "x.idx"), filepath.Join(data, "users", "bob", "pages.idx"))
		}},
	}
	commands := [][]string{
		{"show", "--user", "bob"},
		{"show", "--user", "bob", "--sessions"},
		{"search", "--user", "bob", "--injection", "sailing"},
		{"export", "--user", "bob"},
		{"export", "--all"},
		{"rollback", "--user", "bob", "--list"},
		{"rollback", "--user", "bob", "--to", "1"},
		{"forget", "--user", "bob", "--agent", "dir1", "--all", "--yes"},
		{"forget", "--user", "bob", "--thread", "t", "--yes"},
		{"forget", "--user", "bob", "--fact", "fact_outside", "--yes"},
		{"forget", "--user", "bob", "--all", "--yes"},
		{"doctor"},
	}
	for _, p := range plants {
		for _, args := range commands {
			t.Run(p.name+"/"+args[0]+"/"+args[len(args)-1], func(t *testing.T) {
				data, outside := t.TempDir(), t.TempDir()
				seedDocs(t, data, memory.Scope{UserID: "bob"}, 2)
				p.plant(t, data, outside)
				before := testutil.SnapshotTree(t, outside)
				_, out, errOut := runEnv(t, dataEnv(data), args...)
				if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, outside)); len(d) > 0 {
					t.Errorf("%q changed outside the data directory: %q\n%s%s", args, d, out, errOut)
				}
				for _, s := range []string{"OUTSIDE-FACT", "OUTSIDE-TURN", "OUTSIDE-INDEX", "keep me"} {
					if strings.Contains(out+errOut, s) {
						t.Errorf("%q printed %q, read through a link", args, s)
					}
				}
			})
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(link), 0o700)
	os.RemoveAll(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestE2EServerSymlinks plants the red-team links in a data directory and
// drives the real server over stdio: every tool call that would go
// through a link fails, and nothing outside the data directory is read,
// written, truncated or deleted.
func TestE2EServerSymlinks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	data, outside := t.TempDir(), t.TempDir()
	seedDocs(t, data, memory.Scope{UserID: "bob"}, 1)
	os.MkdirAll(filepath.Join(outside, "dir1"), 0o700)
	os.WriteFile(filepath.Join(outside, "dir1", "precious.txt"), []byte("keep me"), 0o600)
	os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("no trailing newline"), 0o600)
	os.WriteFile(filepath.Join(outside, "memory.json"), []byte(`{"version":"1.0","facts":[{"id":"fact_outside","content":"OUTSIDE-FACT","category":"context","confidence":0.9}]}`), 0o600)
	mustSymlink(t, outside, filepath.Join(data, "users", "bob", "agents"))
	mustSymlink(t, filepath.Join(outside, "notes.txt"), filepath.Join(data, "users", "carol", "turns.jsonl"))
	mustSymlink(t, filepath.Join(outside, "memory.json"), filepath.Join(data, "users", "dave", "memory.json"))
	mustSymlink(t, outside, filepath.Join(data, "users", "erin"))
	before := testutil.SnapshotTree(t, outside)

	srv := startServer(t, data)
	srv.initialize(ctx)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"forget_memory", map[string]any{"user_id": "bob", "agent_name": "dir1", "all": true, "confirm": "forget everything"}},
		{"add_memory", map[string]any{"user_id": "bob", "agent_name": "dir1", "user_input": "hi", "agent_response": "hello"}},
		{"add_memory", map[string]any{"user_id": "carol", "user_input": "hi", "agent_response": "hello"}},
		{"retrieve_memory", map[string]any{"user_id": "dave", "query": "OUTSIDE-FACT"}},
		{"list_memories", map[string]any{"user_id": "dave"}},
		{"save_memory", map[string]any{"user_id": "dave", "content": "Dave likes tea."}},
		{"add_memory", map[string]any{"user_id": "erin", "user_input": "hi", "agent_response": "hello"}},
		{"forget_memory", map[string]any{"user_id": "erin", "all": true, "confirm": "forget everything"}},
	}
	for _, c := range calls {
		raw, err := srv.call(ctx, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		var res struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(raw, &res)
		if !res.IsError {
			t.Errorf("%s %v through a planted link succeeded: %s", c.tool, c.args, raw)
		}
		if strings.Contains(string(raw), "OUTSIDE-FACT") || strings.Contains(string(raw), outside) {
			t.Errorf("%s answered with what lies outside the data directory: %s", c.tool, raw)
		}
	}
	// The server still serves a user without links.
	var ok struct {
		TurnIDs []string `json:"turn_ids"`
	}
	if err := srv.tool(ctx, "add_memory", map[string]any{"user_id": "fay", "user_input": "I knit.", "agent_response": "Nice."}, &ok); err != nil || len(ok.TurnIDs) != 1 {
		t.Errorf("add_memory for a user without links: %v", err)
	}
	srv.stdin.Close()
	srv.wait()
	if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, outside)); len(d) > 0 {
		t.Errorf("the server changed outside the data directory: %q", d)
	}
}
