package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// runEnv runs the program in-process with exactly the environment e.
func runEnv(t *testing.T, e env, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(t.Context(), args, e.get, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkGolden compares got with testdata/<name>.golden; -update rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -run %s -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", path, t.Name(), got, want)
	}
}

// richTime is the clock of the seeded store.
var richTime = time.Date(2026, time.May, 4, 10, 30, 0, 0, time.UTC)

// seedRich stores a memory with every kind of content in dir: user "ana"
// with facts of every category (a correction with what to avoid), user
// and assistant knowledge, profile sections, fact events, watermarks and
// turns in two threads with meta_data; and agent "coder" of ana with a few
// turns of its own.
func seedRich(t *testing.T, dir string) {
	t.Helper()
	s, err := files.Open(dir, files.WithClock(func() time.Time { return richTime }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ana := memory.Scope{UserID: "ana"}
	coder := memory.Scope{UserID: "ana", AgentName: "coder"}
	turns := storetest.NewTurns("trip", 0, 4)
	turns = append(turns, storetest.NewTurns("work", 0, 3)...)
	turns[0].User = "I'm planning a sailing trip to the Azores in September."
	turns[0].Reply = "September is a good month: the Azores high is stable and the water still warm."
	turns[4].User = "Our Go service leaks goroutines when the client disconnects."
	turns[4].Reply = "Pass the request context down and select on ctx.Done() in the worker loop."
	turns[5].MetaData = nil
	storetest.MustAppendTurns(t, s, ana, turns...)
	storetest.MustAppendTurns(t, s, coder, storetest.NewTurns("review", 0, 2)...)
	at := func(day int) time.Time { return time.Date(2026, time.April, day, 9, 0, 0, 0, time.UTC) }
	storetest.MustUpdateDocument(t, s, ana, func(d *memory.Document) error {
		d.User.WorkContext = memory.Section{Summary: "Backend engineer at a logistics startup; writes Go services and maintains the routing API.", UpdatedAt: at(20)}
		d.User.TopOfMind = memory.Section{Summary: "Preparing a sailing trip to the Azores in September.\nFixing a goroutine leak in the routing service.", UpdatedAt: at(21)}
		d.History.LongTermBackground = memory.Section{Summary: "Studied naval architecture before moving into software.", UpdatedAt: at(2)}
		d.Facts = []memory.Fact{
			{ID: "fact_0000000a", Content: "Prefers Go for backend services", Category: memory.CategoryPreference, Confidence: 0.9, CreatedAt: at(3), Source: "work"},
			{ID: "fact_0000000b", Content: "Knows the Azores high-pressure system well", Category: memory.CategoryKnowledge, Confidence: 0.8, CreatedAt: at(4), Source: "trip"},
			{ID: "fact_0000000c", Content: "Works at a logistics startup", Category: memory.CategoryContext, Confidence: 0.95, CreatedAt: at(5), Source: "work"},
			{ID: "fact_0000000d", Content: "Reads the diff before asking questions", Category: memory.CategoryBehavior, Confidence: 0.75, CreatedAt: at(6), Source: "work"},
			{ID: "fact_0000000e", Content: "Wants to sail to the Azores in September", Category: memory.CategoryGoal, Confidence: 0.85, CreatedAt: at(7), Source: "trip"},
			{ID: "fact_0000000f", Content: "Use context cancellation to stop worker goroutines; a done channel per worker was rejected as too much ceremony for this service", Category: memory.CategoryCorrection, Confidence: 0.95, CreatedAt: at(8), Source: "work", SourceError: "The assistant proposed a separate done channel for every worker goroutine"},
		}
		d.Knowledge = []memory.Fact{{ID: "fact_00000010", Content: "Ana's boat is a 34-foot sloop", Category: memory.CategoryKnowledge, Confidence: 0.8, CreatedAt: at(9), Source: "trip"}}
		d.AssistantKnowledge = []memory.Fact{{ID: "fact_00000011", Content: "The assistant recommended passing request contexts to workers", Category: memory.CategoryKnowledge, Confidence: 0.8, CreatedAt: at(10), Source: "work"}}
		d.Watermarks = map[string]int64{"trip": 4, "work": 5}
		d.FactEvents = []memory.FactEvent{
			{FactID: "fact_0000000a", Event: memory.FactCreated, At: at(3), Source: "work", Content: "Prefers Go"},
			{FactID: "fact_0000000a", Event: memory.FactUpdated, At: at(4), Source: memory.SourceManual, Reason: "more precise", Content: "Prefers Go for backend services"},
			{FactID: "fact_000000ff", Event: memory.FactRemoved, At: at(5), Source: "trip", Reason: "outdated", Content: "Owns a dinghy"},
		}
		return nil
	})
	storetest.MustUpdateDocument(t, s, coder, func(d *memory.Document) error {
		d.Facts = []memory.Fact{{ID: "fact_00000020", Content: "Wants review comments as a numbered list", Category: memory.CategoryPreference, Confidence: 0.9, CreatedAt: at(11), Source: "review"}}
		d.Watermarks = map[string]int64{"review": 1}
		return nil
	})
}

// dataEnv is an environment with only the data directory set.
func dataEnv(dir string) env { return env{"MNEMO_DATA_DIR": dir} }

func TestShowCommand(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"show", []string{"show", "--user", "ana"}},
		{"show_facts", []string{"show", "--user=ana", "--facts"}},
		{"show_agent_json", []string{"show", "--user", "ana", "--agent", "coder", "--json"}},
		{"show_empty", []string{"show", "--user", "nobody"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runEnv(t, dataEnv(dir), tc.args...)
			if code != exitOK {
				t.Fatalf("%v = %d\n%s", tc.args, code, errOut)
			}
			checkGolden(t, tc.name, strings.ReplaceAll(out, dir, "$DATA"))
		})
	}
	// Sessions: with a two-exchange window, ana's older exchanges are in
	// mid-term sessions.
	sessEnv := env{"MNEMO_DATA_DIR": dir, "MNEMO_SHORT_TERM_CAPACITY": "2"}
	if code, out, errOut := runEnv(t, sessEnv, "show", "--user", "ana", "--sessions"); code != exitOK {
		t.Fatalf("show --sessions = %d\n%s", code, errOut)
	} else {
		checkGolden(t, "show_sessions", out)
	}
	if code, out, errOut := runEnv(t, sessEnv, "show", "--user", "ana", "--sessions", "--json"); code != exitOK {
		t.Fatalf("show --sessions --json = %d\n%s", code, errOut)
	} else {
		var got showOutput
		pages := 0
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		for _, ses := range got.Sessions {
			pages += len(ses.Pages)
		}
		// 7 exchanges in two threads, 2 of each thread in its window.
		if pages != 3 || got.Facts != nil || got.Threads != nil {
			t.Errorf("show --sessions --json = %+v, want 3 pages in sessions and nothing else", got)
		}
	}
	// The configured user is the default.
	code, out, _ := runEnv(t, env{"MNEMO_DATA_DIR": dir, "MNEMO_USER_ID": "ana"}, "show", "--threads", "--json")
	var got showOutput
	if err := json.Unmarshal([]byte(out), &got); code != exitOK || err != nil {
		t.Fatalf("show --threads --json = %d, %v\n%s", code, err, out)
	}
	if got.Scope.UserID != "ana" || len(got.Threads) != 2 || got.Facts != nil || got.PendingTurns != 2 {
		t.Errorf("show --threads --json = %+v, want ana's 2 threads, 2 pending turns and no facts", got)
	}
	for _, args := range [][]string{{"show", "extra"}, {"show", "--user", "../x"}, {"show", "--user"}} {
		if code, _, errOut := runEnv(t, dataEnv(dir), args...); code != exitUsage || errOut == "" {
			t.Errorf("%v = %d %q, want a usage error", args, code, errOut)
		}
	}
}

func TestSearchCommand(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	code, out, errOut := runEnv(t, dataEnv(dir), "search", "--user", "ana", "--limit", "2", "--injection", "goroutine", "leak")
	if code != exitOK {
		t.Fatalf("search = %d\n%s", code, errOut)
	}
	checkGolden(t, "search", out)

	code, out, errOut = runEnv(t, dataEnv(dir), "search", "--user", "ana", "--json", "Azores sailing")
	var res memory.RetrieveResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("search --json = %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(res.Pages) == 0 || res.Pages[0].ThreadID != "trip" || res.Injection == "" {
		t.Errorf("search --json: pages %+v, injection %q; want the trip thread first and an injection", res.Pages, res.Injection)
	}
	for _, args := range [][]string{{"search"}, {"search", "--limit", "0x", "q"}, {"search", "--limit", "500", "q"}} {
		if code, _, errOut := runEnv(t, dataEnv(dir), args...); code != exitUsage || errOut == "" {
			t.Errorf("%v = %d %q, want a usage error", args, code, errOut)
		}
	}
}

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
	} else if !strings.Contains(errOut, "twice") {
		t.Errorf("import --user error %q, want it to name the scope held twice", errOut)
	}
	one := filepath.Join(t.TempDir(), "coder.json")
	runEnv(t, dataEnv(src), "export", "--user", "ana", "--agent", "coder", "--out", one)
	if code, out, errOut := runEnv(t, dataEnv(dst), "import", "--user", "carol", "--agent", "helper", one); code != exitOK || !strings.Contains(out, "imported into carol/helper: 2 turns") {
		t.Errorf("import --user --agent = %d\n%s%s", code, out, errOut)
	}
}

func TestImportErrors(t *testing.T) {
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

// showJSON runs show --json for scope in dir.
func showJSON(t *testing.T, dir string, args ...string) showOutput {
	t.Helper()
	code, out, errOut := runEnv(t, dataEnv(dir), append([]string{"show", "--json"}, args...)...)
	var got showOutput
	if err := json.Unmarshal([]byte(out), &got); code != exitOK || err != nil {
		t.Fatalf("show --json = %d, %v\n%s%s", code, err, out, errOut)
	}
	return got
}

func TestImportDeerFlow(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runEnv(t, dataEnv(dir), "import", "--user", "wang", filepath.Join("testdata", "import", "deerflow", "memory.json"))
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
}

func TestImportMemoryOS(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runEnv(t, dataEnv(dir), "import", filepath.Join("testdata", "import", "memoryos"))
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
	userDir := filepath.Join("testdata", "import", "memoryos", "users", "alice")
	code, out, errOut = runEnv(t, dataEnv(dir), "import", "--format", "memoryos", "--user", "alice2", "--thread", "old-chats", "--pending", userDir)
	if code != exitOK {
		t.Fatalf("import of a user dir = %d\n%s%s", code, out, errOut)
	}
	got = showJSON(t, dir, "--user", "alice2")
	if got.PendingTurns != 5 || got.Threads[0].ThreadID != "old-chats" || len(got.AssistantKnowledge) != 1 {
		t.Errorf("alice2: %d pending, threads %+v, %d assistant knowledge", got.PendingTurns, got.Threads, len(got.AssistantKnowledge))
	}
}

// doctorEndpoint is an OpenAI-compatible endpoint that answers every chat
// completion with "ok" and every embedding with a 3-vector, or fails
// every request with status when it is set.
func doctorEndpoint(t *testing.T, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			return
		}
		switch r.URL.Path {
		case "/v1/chat/completions":
			reply := `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":1,"total_tokens":15}}`
			w.Write([]byte(reply))
		case "/v1/embeddings":
			w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],"model":"emb","usage":{"prompt_tokens":5,"total_tokens":5}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDoctorCommand(t *testing.T) {
	const key = "sk-test-Zq8WcX1eKf"
	normalize := func(out, dir, url string) string {
		out = strings.ReplaceAll(out, dir, "$DATA")
		return strings.ReplaceAll(out, url, "$URL")
	}
	t.Run("healthy", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data") // created 0700 by the store
		seedRich(t, dir)
		srv := doctorEndpoint(t, 0)
		code, out, errOut := runEnv(t, env{
			"MNEMO_DATA_DIR": dir, "MNEMO_LLM_BASE_URL": srv.URL + "/v1", "MNEMO_LLM_API_KEY": key,
			"MNEMO_EMBEDDING_MODEL": "emb-small",
		}, "doctor")
		if code != exitOK {
			t.Errorf("doctor = %d, want 0\n%s%s", code, out, errOut)
		}
		if strings.Contains(out+errOut, key) {
			t.Errorf("doctor printed the API key:\n%s", out)
		}
		checkGolden(t, "doctor_healthy", normalize(out, dir, srv.URL))
		if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 1 {
			t.Errorf("doctor left %d entries in users/, want only ana", len(entries))
		}
	})
	t.Run("broken", func(t *testing.T) {
		dir := t.TempDir()
		seedRich(t, dir)
		os.Chmod(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "users", "ana", "coder.txt"), nil, 0o644)
		srv := doctorEndpoint(t, http.StatusUnauthorized)
		code, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": dir, "MNEMO_LLM_BASE_URL": srv.URL + "/v1", "MNEMO_LLM_API_KEY": key}, "doctor")
		if code != exitError {
			t.Errorf("doctor = %d, want 1", code)
		}
		if !strings.Contains(out, "MNEMO_LLM_API_KEY") || !strings.Contains(out, "chmod 700") || !strings.Contains(out, "3 problem(s)") {
			t.Errorf("doctor output does not say what to fix:\n%s", out)
		}
		if strings.Contains(out+errOut, key) {
			t.Errorf("doctor printed the API key:\n%s", out)
		}
		checkGolden(t, "doctor_broken", normalize(out, dir, srv.URL))
	})
	t.Run("missing data dir", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "a", "b")
		code, out, _ := runEnv(t, dataEnv(dir), "doctor")
		if code != exitOK || !strings.Contains(out, "does not exist yet") {
			t.Errorf("doctor with a missing data dir = %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(parent, "a")); !os.IsNotExist(err) {
			t.Errorf("doctor left the directories it created to check (err %v)", err)
		}
		ro := filepath.Join(parent, "ro")
		os.Mkdir(ro, 0o500)
		if os.Geteuid() != 0 {
			code, out, _ = runEnv(t, dataEnv(filepath.Join(ro, "data")), "doctor")
			if code != exitError || !strings.Contains(out, "cannot be created") {
				t.Errorf("doctor with an uncreatable data dir = %d\n%s", code, out)
			}
		}
	})
	t.Run("bad config", func(t *testing.T) {
		code, out, _ := runEnv(t, env{"MNEMO_DATA_DIR": t.TempDir(), "MNEMO_MAX_FACTS": "0"}, "doctor")
		if code != exitError || !strings.Contains(out, "max_facts") || !strings.Contains(out, "MNEMO_MAX_FACTS") {
			t.Errorf("doctor with a bad setting = %d\n%s", code, out)
		}
	})
	t.Run("corrupt memory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		seedRich(t, dir)
		os.WriteFile(filepath.Join(dir, "users", "ana", "memory.json"), []byte("{not json"), 0o600)
		code, out, _ := runEnv(t, dataEnv(dir), "doctor")
		if code != exitError || !strings.Contains(out, "memory.json of ana") || !strings.Contains(out, "mnemo rollback --user ana") {
			t.Errorf("doctor with a corrupt memory.json = %d\n%s", code, out)
		}
	})
}
