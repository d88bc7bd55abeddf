package cli

import (
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
