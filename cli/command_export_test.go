package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// exportedAt matches the export's time stamp and generator, which vary.
var exportedAt = regexp.MustCompile(`"exported_at": "[^"]*",\n  "generator": "[^"]*"`)

func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	code, out, errOut := runEnv(t, dataEnv(dir), "export", "--user", "ana", "--agent", "coder")
	if code != exitOK || !strings.Contains(errOut, "exported 1 scope(s), 2 turns, 1 facts to stdout") {
		t.Fatalf("export = %d\n%s", code, errOut)
	}
	checkGolden(t, "export_agent", exportedAt.ReplaceAllString(out, `"exported_at": "…", "generator": "…"`))

	path := filepath.Join(t.TempDir(), "ana.json")
	if code, _, errOut := runEnv(t, dataEnv(dir), "export", "--user", "ana", "--out", path); code != exitOK {
		t.Fatalf("export --out = %d\n%s", code, errOut)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if code, _, errOut := runEnv(t, dataEnv(dir), "export", "--user", "nobody"); code != exitError || !strings.Contains(errOut, "nothing to export") {
		t.Errorf("export of an unknown user = %d %q", code, errOut)
	}
	if code, _, _ := runEnv(t, dataEnv(dir), "export", "--all", "--user", "ana"); code != exitUsage {
		t.Errorf("export --all --user = %d, want a usage error", code)
	}
}

// loadAll reads every scope's document and turns from the store in dir.
func loadAll(t *testing.T, dir string) map[memory.Scope]exportScope {
	t.Helper()
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	scopes, err := s.Scopes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[memory.Scope]exportScope{}
	for _, sc := range scopes {
		out[sc] = exportScope{Scope: sc, Document: storetest.MustLoadDocument(t, s, sc), Turns: storetest.MustReadTurns(t, s, sc, 0)}
	}
	return out
}

// TestExportImportRoundTrip exports a rich memory of two users, imports it
// into an empty data directory and checks that every document and turn
// log is identical, field for field.
func TestExportImportRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	seedRich(t, src)
	s, err := files.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustAppendTurns(t, s, memory.Scope{UserID: "bob"}, storetest.NewTurns("default", 0, 3)...)
	s.Close()

	path := filepath.Join(t.TempDir(), "all.json")
	if code, _, errOut := runEnv(t, dataEnv(src), "export", "--all", "--out", path); code != exitOK {
		t.Fatalf("export --all = %d\n%s", code, errOut)
	}
	code, out, errOut := runEnv(t, dataEnv(dst), "import", path)
	if code != exitOK {
		t.Fatalf("import = %d\n%s%s", code, out, errOut)
	}
	want, got := loadAll(t, src), loadAll(t, dst)
	if len(want) != 3 || len(got) != len(want) {
		t.Fatalf("imported %d scopes, want %d (3)", len(got), len(want))
	}
	for sc, w := range want {
		g := got[sc]
		if !reflect.DeepEqual(g.Document, w.Document) {
			gj, _ := json.MarshalIndent(g.Document, "", " ")
			wj, _ := json.MarshalIndent(w.Document, "", " ")
			t.Errorf("document of %s after the round trip:\n%s\nwant:\n%s", sc.Key(), gj, wj)
		}
		if d := storetest.DiffTurns(g.Turns, w.Turns); d != "" || !reflect.DeepEqual(g.Turns, w.Turns) {
			t.Errorf("turns of %s after the round trip: %s", sc.Key(), d)
		}
	}
	if doc := want[memory.Scope{UserID: "ana"}].Document; len(doc.FactEvents) != 3 || len(doc.Facts) != 6 || doc.Revision != 1 || len(doc.Watermarks) != 2 {
		t.Fatalf("the seeded memory is not rich enough: %+v", doc)
	}

	// A second export of the copy is the same file.
	path2 := filepath.Join(t.TempDir(), "again.json")
	if code, _, errOut := runEnv(t, dataEnv(dst), "export", "--all", "--out", path2); code != exitOK {
		t.Fatalf("export of the copy = %d\n%s", code, errOut)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(path2)
	if x, y := exportedAt.ReplaceAll(a, nil), exportedAt.ReplaceAll(b, nil); !bytes.Equal(x, y) {
		t.Errorf("export of the imported copy differs from the original export")
	}

	// Importing again is refused and changes nothing.
	code, _, errOut = runEnv(t, dataEnv(dst), "import", path)
	if code != exitError || !strings.Contains(errOut, "already holds memory") || !strings.Contains(errOut, "--user") {
		t.Errorf("import into non-empty scopes = %d %q, want a refusal that says what to do", code, errOut)
	}
	// --user moves an export to another user.
	if code, out, errOut := runEnv(t, dataEnv(dst), "import", "--user", "ana2", path); code == exitOK {
		t.Errorf("import --user of a file with two users = %d %s, want a refusal (two scopes of ana2 coincide)", code, out)
	} else if !strings.Contains(errOut, "2 users") || !strings.Contains(errOut, "--from-user") {
		t.Errorf("import --user error %q, want it to name the users held and how to pick one", errOut)
	}
	one := filepath.Join(t.TempDir(), "coder.json")
	runEnv(t, dataEnv(src), "export", "--user", "ana", "--agent", "coder", "--out", one)
	if code, out, errOut := runEnv(t, dataEnv(dst), "import", "--user", "carol", "--agent", "helper", one); code != exitOK || !strings.Contains(out, "imported into carol/helper: 2 turns") {
		t.Errorf("import --user --agent = %d\n%s%s", code, out, errOut)
	}
}
