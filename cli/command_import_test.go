package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

func TestImportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	for _, tc := range []struct {
		name, path, want string
		code             int
	}{
		{"newer version", write("x.json", `{"format":"mnemo-export","version":2,"scopes":[]}`), "newer mnemo", exitError},
		{"unknown format", write("x.json", `{"format":"other"}`), "does not know", exitUsage},
		{"not json", write("x.json", `hello`), "not a JSON object", exitUsage},
		{"no memory", write("x.json", `{"format":"mnemo-export","version":1,"scopes":[]}`), "no memory", exitError},
		{"one memoryos file", write("short_term.json", `[]`), "data directory", exitUsage},
		{"bad seq", write("x.json", `{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"a"},"document":{"version":"1.0","facts":[]},"turns":[{"id":"t1","seq":2,"thread_id":"x"},{"id":"t2","seq":1,"thread_id":"x"}]}]}`), "increasing seq", exitError},
		{"bad user", write("x.json", `{"format":"mnemo-export","version":1,"scopes":[{"scope":{"user_id":"../etc"},"document":null,"turns":[]}]}`), "user_id", exitError},
		{"missing", filepath.Join(dir, "nope.json"), "no such file", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runEnv(t, dataEnv(dir), "import", tc.path)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("import = %d %q%q, want %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 0 {
		t.Errorf("failed imports left %d scopes", len(entries))
	}
}

func TestImportDeerFlow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runEnv(t, dataEnv(dir), "import", "--user", "wang", filepath.Join("..", "importers", "testdata", "deerflow", "memory.json"))
	if code != exitOK {
		t.Fatalf("import = %d\n%s%s", code, out, errOut)
	}
	checkGolden(t, "import_deerflow", out)

	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := storetest.MustLoadDocument(t, s, memory.Scope{UserID: "wang"})
	wantTime := time.Date(2026, time.June, 11, 16, 47, 59, 0, time.UTC)
	if !doc.LastUpdated.Equal(wantTime) || !doc.User.PersonalContext.UpdatedAt.Equal(wantTime) || !doc.User.WorkContext.UpdatedAt.Equal(wantTime) {
		t.Errorf("times: lastUpdated %v, personalContext %v, workContext %v; want %v", doc.LastUpdated, doc.User.PersonalContext.UpdatedAt, doc.User.WorkContext.UpdatedAt, wantTime)
	}
	if doc.History.EarlierContext != (memory.Section{}) || !strings.HasPrefix(doc.User.TopOfMind.Summary, "Getting the agent") {
		t.Errorf("sections: %+v %+v", doc.User, doc.History)
	}
	if len(doc.Facts) != 7 {
		t.Fatalf("%d facts, want 7", len(doc.Facts))
	}
	categories := map[string]bool{}
	for _, f := range doc.Facts[:6] {
		categories[f.Category] = true
	}
	if len(categories) != len(memory.Categories) {
		t.Errorf("categories %v, want all of %v", categories, memory.Categories)
	}
	corr := doc.Facts[5]
	if corr.ID != "fact_ff0c3979" || corr.Category != "correction" || corr.Confidence != 0.95 || corr.Source != "thread-41" || !strings.Contains(corr.SourceError, "ReAct") || !corr.CreatedAt.Equal(wantTime) {
		t.Errorf("correction fact = %+v", corr)
	}
	if f := doc.Facts[4]; f.Confidence != 1 || !f.CreatedAt.Equal(time.Date(2026, time.June, 9, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("behavior fact = %+v", f)
	}
	if last := doc.Facts[6]; last.ID == "fact_a4cb8a0a" || last.Category != "context" {
		t.Errorf("repeated id / unknown category fact = %+v; want a new id and category context", last)
	}
	// The history says an import brought each fact.
	if len(doc.FactEvents) != len(doc.Facts) {
		t.Fatalf("%d fact events for %d facts, want one each", len(doc.FactEvents), len(doc.Facts))
	}
	for i, e := range doc.FactEvents {
		if e.FactID != doc.Facts[i].ID || e.Event != memory.FactCreated || e.Actor != memory.ActorImport || e.Reason != "imported" {
			t.Errorf("fact event %d = %+v, want created by the import", i, e)
		}
	}
}

func TestImportMemoryOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runEnv(t, dataEnv(dir), "import", filepath.Join("..", "importers", "testdata", "memoryos"))
	if code != exitOK {
		t.Fatalf("import = %d\n%s%s", code, out, errOut)
	}
	checkGolden(t, "import_memoryos", out)

	got := showJSON(t, dir, "--user", "alice")
	if got.StoredTurns != 5 || got.PendingTurns != 0 || len(got.Threads) != 1 || got.Threads[0].ThreadID != "memoryos" {
		t.Errorf("turns: %d stored, %d pending, threads %+v; want 5 in thread memoryos, none pending", got.StoredTurns, got.PendingTurns, got.Threads)
	}
	if len(got.Profile) != 1 || got.Profile[0].Name != "personalContext" || !strings.Contains(got.Profile[0].Summary, "prefers Go") {
		t.Errorf("profile = %+v", got.Profile)
	}
	if len(got.Knowledge) != 2 || got.Knowledge[0].Content != "Alice's staging Postgres listens on port 5433." || got.Knowledge[0].Category != "knowledge" {
		t.Errorf("knowledge = %+v", got.Knowledge)
	}
	if len(got.AssistantKnowledge) != 1 || !strings.Contains(got.AssistantKnowledge[0].Content, "50/34") {
		t.Errorf("assistant knowledge = %+v", got.AssistantKnowledge)
	}

	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	turns := storetest.MustReadTurns(t, s, memory.Scope{UserID: "alice"}, 0)
	s.Close()
	var order []string
	for _, tr := range turns {
		order = append(order, tr.Time.Format("01-02 15:04"))
	}
	if want := "06-12 14:30 06-20 18:02 06-20 18:05 07-02 09:15 07-02 09:20"; strings.Join(order, " ") != want {
		t.Errorf("turn times %v, want %s", order, want)
	}
	if string(turns[3].MetaData) != `{"client": "cli", "mood": "busy"}` && !strings.Contains(string(turns[3].MetaData), `"mood"`) {
		t.Errorf("meta_data of a short-term page = %s", turns[3].MetaData)
	}

	// A user directory works too; --pending leaves the turns for the
	// updater and --thread names their thread.
	userDir := filepath.Join("..", "importers", "testdata", "memoryos", "users", "alice")
	code, out, errOut = runEnv(t, dataEnv(dir), "import", "--format", "memoryos", "--user", "alice2", "--thread", "old-chats", "--pending", userDir)
	if code != exitOK {
		t.Fatalf("import of a user dir = %d\n%s%s", code, out, errOut)
	}
	got = showJSON(t, dir, "--user", "alice2")
	if got.PendingTurns != 5 || got.Threads[0].ThreadID != "old-chats" || len(got.AssistantKnowledge) != 1 {
		t.Errorf("alice2: %d pending, threads %+v, %d assistant knowledge", got.PendingTurns, got.Threads, len(got.AssistantKnowledge))
	}
}

// TestImportPickScopes: --user works for a one-user export; for an export
// of several users it lists them and says how to pick one, and
// --from-user / --from-agent pick.
func TestImportPickScopes(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	seedRich(t, src) // ana and ana/coder
	seedDocs(t, src, memory.Scope{UserID: "carl"}, 1)
	all := filepath.Join(t.TempDir(), "all.json")
	if code, _, errOut := runCmd(t, src, "export", "--all", "--out", all); code != exitOK {
		t.Fatalf("export --all = %d %s", code, errOut)
	}
	ana := filepath.Join(t.TempDir(), "ana.json")
	if code, _, errOut := runCmd(t, src, "export", "--user", "ana", "--out", ana); code != exitOK {
		t.Fatalf("export --user ana = %d %s", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // in stdout on success, in stderr on failure
	}{
		{"one user's export under another name", []string{"--user", "bob", ana}, exitOK, []string{"imported into bob:", "imported into bob/coder:"}},
		{"several users with --user", []string{"--user", "bob", all}, exitError, []string{"2 users", "ana, ana/coder, carl", "--from-user"}},
		{"several scopes with --agent", []string{"--agent", "x", all}, exitError, []string{"3 scopes", "--from-agent"}},
		{"pick a user", []string{"--from-user", "ana", "--user", "bob", all}, exitOK, []string{"imported into bob:", "imported into bob/coder:"}},
		{"pick an agent", []string{"--from-user", "ana", "--from-agent", "coder", "--user", "bob", "--agent", "rev", all}, exitOK, []string{"imported into bob/rev:"}},
		{"pick nothing", []string{"--from-user", "zed", all}, exitError, []string{"no scope matching", "ana, ana/coder, carl"}},
		{"pick from another format", []string{"--from-user", "ana", filepath.Join("..", "importers", "testdata", "deerflow", "memory.json")}, exitUsage, []string{"mnemo export"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := runCmd(t, dir, append([]string{"import"}, tc.args...)...)
			got := out
			if tc.code != exitOK {
				got = errOut
			}
			if code != tc.code {
				t.Fatalf("import %v = %d, want %d\n%s%s", tc.args, code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("import %v: %q does not say %q", tc.args, got, w)
				}
			}
			if tc.code != exitOK {
				if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 0 {
					t.Errorf("a refused import wrote %d scopes", len(entries))
				}
			}
		})
	}
}

// TestImportRefusesDevices (issue 41, low 8): mnemo import of a device
// (/dev/zero, which never ends) or a pipe is refused at once as not a
// regular file, and nothing is written. Before the fix it read /dev/zero
// into memory without end.
func TestImportRefusesDevices(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	dir := t.TempDir()
	for _, format := range []string{"", "chatgpt", "deerflow", "mnemo"} {
		args := []string{"import", "--user", "ana", "/dev/zero"}
		if format != "" {
			args = append(args, "--format", format)
		}
		code, out, errOut := runBinary(t, []string{"MNEMO_DATA_DIR=" + dir}, args...)
		if code == 0 || !strings.Contains(errOut, "not a regular file") {
			t.Errorf("mnemo %v = %d\n%s%s\nwant a refusal: not a regular file", args, code, out, errOut)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 0 {
		t.Errorf("the refused imports wrote %d user directories", len(entries))
	}
}
