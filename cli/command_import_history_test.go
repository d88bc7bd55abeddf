package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// runBinary runs the built mnemo with only the given environment (and
// HOME in a temp dir), and returns its exit code and output.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), mnemoBinary(t), args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatalf("run mnemo %v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// sentinels are the words of the fixtures that must never be stored:
// system prompts, hidden context, tool traffic, uploaded files, the
// answers to uploads, the branch the user left, reasoning, secrets.
var sentinels = []string{"SYSPROMPT-SENTINEL", "CUSTOM-PROFILE-SENTINEL", "TOOL-CALL-SENTINEL", "TOOL-OUTPUT-SENTINEL",
	"REASONING-SENTINEL", "ABANDONED-BRANCH-SENTINEL", "UPLOAD-REPLY-SENTINEL", "ATTACHMENT-SENTINEL", "TOOL-INPUT-SENTINEL",
	"TOOL-RESULT-SENTINEL", "THINKING-SENTINEL", "passport-scan", "itinerary.txt", "abcdefghijklmnopqrstuvwxyz012345"}

// TestImportChatHistories imports the ChatGPT and Claude fixtures through
// the binary into a memory that already holds an exchange: the turns keep
// their times, one thread per conversation, nothing the filter drops
// reaches the disk, and a second import adds nothing (the data dir stays
// byte for byte the same).
func TestImportChatHistories(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	type want struct {
		thread, user, reply string
		at                  time.Time
	}
	for _, tc := range []struct {
		format, path string
		want         []want // in the order they are stored
		says         []string
	}{
		{"chatgpt", filepath.Join("..", "importers", "testdata", "chatgpt", "conversations.json"), []want{
			{"chatgpt-c0ffee00-0000-4000-8000-000000000001", "I keep my boat Marlin, a Contessa 32, in Cascais.", "Noted: Marlin, a Contessa 32, moored in Cascais.", utc("2023-06-05T21:21:40.5Z")},
			{"chatgpt-c0ffee00-0000-4000-8000-000000000001", "When is high tide in Cascais tomorrow?", "High tide in Cascais is at 09:12 tomorrow.", utc("2023-06-06T21:20:00Z")},
			{"chatgpt-c0ffee00-0000-4000-8000-000000000002", "I prefer metric units. My key is [redacted: openai api key], ignore it.", "Metric it is.", utc("2024-01-01T10:01:00Z")},
		}, []string{"3 turns in 2 threads", "2 system prompt or hidden context messages", "1 tool result:", "2 tool call or reasoning steps", "1 upload-only message", "1 openai api key", "add_memory"}},
		// The Claude export lists its newer conversation first: the older
		// one is stored first.
		{"claude", filepath.Join("..", "importers", "testdata", "claude"), []want{
			{"claude-5a1e0000-0000-4000-8000-00000000000b", "Which Go linter should I use?", "staticcheck catches the most real bugs.", utc("2023-11-20T08:05:00Z")},
			{"claude-5a1e0000-0000-4000-8000-00000000000a", "I'm planning a trip to Lisbon in May.", "Let me check the weather.\nMay in Lisbon is warm, around 22°C.", utc("2024-03-01T10:00:05Z")},
			{"claude-5a1e0000-0000-4000-8000-00000000000a", "Thanks! I'm vegetarian, so keep that in mind for restaurants.", "Noted: vegetarian restaurants only.", utc("2024-03-01T10:03:00Z")},
		}, []string{"3 turns in 2 threads", "1 tool result:", "2 tool call or reasoning steps", "1 upload-only message", "files uploaded with 1 message"}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{"MNEMO_DATA_DIR=" + dir}
			if code, _, errOut := runBinary(t, env, "add", "--user", "ana", "--thread", "today", "--input", "I moved to Porto.", "--reply", "Noted."); code != 0 {
				t.Fatalf("add = %d %s", code, errOut)
			}
			code, out, errOut := runBinary(t, env, "import", "--user", "ana", tc.path)
			if code != 0 {
				t.Fatalf("import = %d\n%s%s", code, out, errOut)
			}
			for _, w := range tc.says {
				if !strings.Contains(out, w) {
					t.Errorf("import says\n%s\nwithout %q", out, w)
				}
			}
			if errOut != "" {
				t.Errorf("stderr (not a terminal) = %q, want nothing", errOut)
			}
			s, err := files.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			turns := storetest.MustReadTurns(t, s, memory.Scope{UserID: "ana"}, 0)
			s.Close()
			if len(turns) != 1+len(tc.want) || turns[0].ThreadID != "today" {
				t.Fatalf("%d turns (first in %q), want the one added and %d imported", len(turns), turns[0].ThreadID, len(tc.want))
			}
			for i, w := range tc.want {
				got := turns[i+1]
				if got.ThreadID != w.thread || got.User != w.user || got.Reply != w.reply || !got.Time.Equal(w.at) {
					t.Errorf("turn %d = %s %q %q at %v, want %s %q %q at %v", i+1, got.ThreadID, got.User, got.Reply, got.Time, w.thread, w.user, w.reply, w.at)
				}
			}
			if hits := testutil.GrepFiles(t, dir, sentinels...); len(hits) > 0 {
				t.Errorf("stored what the filter drops: %v", hits)
			}

			before := testutil.SnapshotTree(t, dir)
			code, out, errOut = runBinary(t, env, "import", "--user", "ana", tc.path)
			if code != 0 || !strings.Contains(out, "0 turns in 0 threads") || !strings.Contains(out, "3 already imported exchanges") {
				t.Errorf("second import = %d\n%s%s\nwant 0 turns, 3 already imported", code, out, errOut)
			}
			if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, dir)); len(d) > 0 {
				t.Errorf("a second import changed the data dir: %v", d)
			}
		})
	}
}

// TestImportMemoryGraph imports the memory server's memory.jsonl: facts
// naming their entity, the user recognised, repeats skipped, and a second
// import adds nothing.
func TestImportMemoryGraph(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"MNEMO_DATA_DIR=" + dir}
	path := filepath.Join("..", "importers", "testdata", "memory-graph", "memory.jsonl")
	code, out, errOut := runBinary(t, env, "import", "--user", "ana", path)
	if code != 0 {
		t.Fatalf("import = %d\n%s%s", code, out, errOut)
	}
	for _, w := range []string{"7 facts", `entity "default_user" taken for the user`, "1 fact already known or repeated", "1 empty observation"} {
		if !strings.Contains(out, w) {
			t.Errorf("import says\n%s\nwithout %q", out, w)
		}
	}
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc := storetest.MustLoadDocument(t, s, memory.Scope{UserID: "ana"})
	s.Close()
	got := map[string]string{}
	for _, f := range doc.Facts {
		got[f.Content] = f.Category
		if f.Source != "memory-graph" || f.Confidence != importers.GraphConfidence {
			t.Errorf("fact %+v: want source memory-graph, confidence %v", f, importers.GraphConfidence)
		}
	}
	want := map[string]string{
		"User: Sails a Contessa 32 called Marlin":     "context",
		"User: Prefers metric units":                  "context",
		"Acme_Corp (organization): Makes anvils":      "knowledge",
		"Acme_Corp (organization): Is based in Porto": "knowledge",
		"Rosa_Lima (person): Is the user's sister":    "knowledge",
		"User works at Acme_Corp":                     "context",
		"Rosa_Lima works at Acme_Corp":                "knowledge",
	}
	if len(got) != len(want) {
		t.Errorf("facts %v, want %v", got, want)
	}
	for c, cat := range want {
		if got[c] != cat {
			t.Errorf("fact %q: category %q, want %q", c, got[c], cat)
		}
	}
	if len(doc.FactEvents) != len(want) || doc.FactEvents[0].Event != memory.FactCreated {
		t.Errorf("fact events %+v, want one created event a fact", doc.FactEvents)
	}

	before := testutil.SnapshotTree(t, dir)
	code, out, _ = runBinary(t, env, "import", "--user", "ana", path)
	if code != 0 || !strings.Contains(out, "into ana: 0 facts") {
		t.Errorf("second import = %d %s, want 0 facts", code, out)
	}
	if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, dir)); len(d) > 0 {
		t.Errorf("a second import changed the data dir: %v", d)
	}

	// --graph-user picks another entity as the user.
	code, out, errOut = runBinary(t, env, "import", "--user", "rosa", "--graph-user", "Rosa_Lima", path)
	if code != 0 || !strings.Contains(out, `entity "Rosa_Lima" taken for the user`) {
		t.Fatalf("import --graph-user = %d\n%s%s", code, out, errOut)
	}
}

// TestImportBadFiles: a file cut short, or with a record that breaks its
// format, is refused naming the record, and leaves every byte of the
// data dir as it was.
func TestImportBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"MNEMO_DATA_DIR=" + dir}
	if code, _, errOut := runBinary(t, env, "add", "--user", "ana", "--input", "I moved to Porto.", "--reply", "Noted."); code != 0 {
		t.Fatalf("add = %d %s", code, errOut)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "importers", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	chatgpt, claude, graph := read("chatgpt/conversations.json"), read("claude/conversations.json"), read("memory-graph/memory.jsonl")
	cut := func(s, at string) string { return s[:strings.Index(s, at)+len(at)] }
	for _, tc := range []struct {
		name, file, content, format string
		want                        []string
	}{
		{"chatgpt cut in the second conversation", "conversations.json", cut(chatgpt, `"title": "Units"`), "", []string{"conversation 2 at line 55", "cut short"}},
		{"chatgpt cut between conversations", "conversations.json", cut(chatgpt, "\n  }"), "", []string{"not closed after conversation 1", "cut short"}},
		{"chatgpt loose node", "conversations.json", strings.Replace(chatgpt, `"parent": "u3"`, `"parent": "nowhere"`, 1), "", []string{"conversation 2", "c0ffee00-0000-4000-8000-000000000002", `parent "nowhere"`}},
		{"chatgpt unknown role", "conversations.json", strings.Replace(chatgpt, `"role": "tool"`, `"role": "robot"`, 1), "", []string{"conversation 1", `"robot"`}},
		{"claude cut", "conversations.json", cut(claude, `"name": "Linters"`), "", []string{"conversation 2", "cut short"}},
		{"claude bad sender", "conversations.json", strings.Replace(claude, `"sender": "assistant"`, `"sender": "bot"`, 1), "", []string{"conversation 1", "message m-a2", `"bot"`}},
		{"claude bad time", "conversations.json", strings.Replace(claude, `"2024-03-01T10:03:00.000000Z"`, `"yesterday"`, 1), "", []string{"conversation 1", "m-a3", "RFC 3339"}},
		{"graph cut", "memory.jsonl", cut(graph, `{"type":"relation","from":"Rosa_Lima"`), "", []string{"line 5", "cut short"}},
		{"graph bad line", "memory.jsonl", strings.Replace(graph, `"type":"relation","from":"Rosa_Lima"`, `"type":"edge","from":"Rosa_Lima"`, 1), "", []string{"line 5", `"edge"`}},
		{"not an export", "conversations.json", `[{"id": "x"}]`, "chatgpt", []string{"conversation 1", "no mapping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"import", "--user", "ana", p}
			if tc.format != "" {
				args = append(args, "--format", tc.format)
			}
			before := testutil.SnapshotTree(t, dir)
			code, out, errOut := runBinary(t, env, args...)
			if code == 0 {
				t.Fatalf("import = 0\n%s, want a refusal", out)
			}
			for _, w := range append(tc.want, "nothing imported") {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q does not say %q", errOut, w)
				}
			}
			if d := testutil.DiffTrees(before, testutil.SnapshotTree(t, dir)); len(d) > 0 {
				t.Errorf("a refused import changed the data dir: %v", d)
			}
		})
	}
}

// genChatGPTExport writes a ChatGPT export of convs conversations of
// perConv messages each (a user message and its reply in turn, a system
// message at the root), with times an hour apart per conversation.
func genChatGPTExport(convs, perConv int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	start := time.Date(2022, 1, 1, 9, 0, 0, 0, time.UTC)
	for c := range convs {
		if c > 0 {
			b.WriteString(",")
		}
		id := fmt.Sprintf("conv-%05d", c)
		mapping := map[string]any{"root": map[string]any{"id": "root", "message": nil, "parent": nil, "children": []string{id + "-0"}}}
		parent := "root"
		for m := range perConv {
			node := fmt.Sprintf("%s-%d", id, m)
			role, text := "user", fmt.Sprintf("Question %d of conversation %d: what about topic %d?", m/2, c, (c*7+m)%97)
			if m%2 == 1 {
				role, text = "assistant", fmt.Sprintf("Answer %d of conversation %d: topic %d is covered.", m/2, c, (c*7+m)%97)
			}
			at := float64(start.Add(time.Duration(c)*time.Hour + time.Duration(m)*time.Second).Unix())
			var children []string
			if m+1 < perConv {
				children = []string{fmt.Sprintf("%s-%d", id, m+1)}
			}
			mapping[node] = map[string]any{"id": node, "parent": parent, "children": children, "message": map[string]any{
				"id": node, "author": map[string]any{"role": role}, "create_time": at, "recipient": "all",
				"content": map[string]any{"content_type": "text", "parts": []string{text}}, "metadata": map[string]any{}}}
			parent = node
		}
		conv, _ := json.Marshal(map[string]any{"id": id, "conversation_id": id, "title": fmt.Sprintf("Conversation %d", c),
			"create_time": float64(start.Add(time.Duration(c) * time.Hour).Unix()), "current_node": parent, "mapping": mapping})
		b.Write(conv)
	}
	b.WriteString("]")
	return b.Bytes()
}

// TestImportLargeExport imports a generated export of 10,000 messages
// through the binary: 5,000 turns in 100 threads; again: nothing added.
// Under -race (a binary ten times slower) the export has 20 conversations.
func TestImportLargeExport(t *testing.T) {
	t.Parallel()
	convs := 100
	if raceEnabled() {
		convs = 20
	}
	dir := t.TempDir()
	p := filepath.Join(t.TempDir(), "conversations.json")
	if err := os.WriteFile(p, genChatGPTExport(convs, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MNEMO_DATA_DIR=" + dir}
	code, out, errOut := runBinary(t, env, "import", "--user", "ana", p)
	want := fmt.Sprintf("%d turns in %d threads", convs*50, convs)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("%d messages", convs*100)) {
		t.Fatalf("import = %d\n%s%s\nwant %s", code, out, errOut, want)
	}
	code, out, _ = runBinary(t, env, "import", "--user", "ana", p)
	if code != 0 || !strings.Contains(out, "0 turns") || !strings.Contains(out, fmt.Sprintf("%d already imported", convs*50)) {
		t.Errorf("second import = %d\n%s", code, out)
	}
}

// TestImportExtraction: with a model configured, --dry-run prints the
// estimated cost and writes nothing; the import then extracts facts from
// the conversations oldest first, and stops when the daily token budget is
// spent, leaving the rest pending.
func TestImportExtraction(t *testing.T) {
	t.Parallel()
	llm := openaitest.NewServer(t)
	llm.ChatFunc = codewordModel(t, func(w string, _ int64) string { return "The user's project is called " + w }, nil)
	export := `[` +
		`{"uuid":"c-new","name":"n","created_at":"2025-02-01T00:00:00Z","chat_messages":[` +
		`{"uuid":"n1","sender":"human","created_at":"2025-02-01T00:00:00Z","text":"My project is codeword-birch."},` +
		`{"uuid":"n2","sender":"assistant","created_at":"2025-02-01T00:00:01Z","text":"Noted."}]},` +
		`{"uuid":"c-old","name":"o","created_at":"2024-02-01T00:00:00Z","chat_messages":[` +
		`{"uuid":"o1","sender":"human","created_at":"2024-02-01T00:00:00Z","text":"My project is codeword-alder."},` +
		`{"uuid":"o2","sender":"assistant","created_at":"2024-02-01T00:00:01Z","text":"Noted."}]}]`
	p := filepath.Join(t.TempDir(), "conversations.json")
	if err := os.WriteFile(p, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{"MNEMO_DATA_DIR=" + dir, "MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=test-key", "MNEMO_LLM_MODEL=fake"}

	code, out, errOut := runBinary(t, env, "import", "--dry-run", "--user", "ana", p)
	if code != 0 || !strings.Contains(out, "would import") || !strings.Contains(out, "in 2 model calls") || !strings.Contains(out, "dry run: nothing written") {
		t.Fatalf("import --dry-run = %d\n%s%s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || len(llm.ChatRequests()) != 0 {
		t.Fatalf("--dry-run wrote %d entries and called the model %d times", len(entries), len(llm.ChatRequests()))
	}

	// A budget of 1 token: the first update spends it, the second waits.
	code, out, errOut = runBinary(t, append(env, "MNEMO_DAILY_TOKEN_BUDGET=1"), "import", "--user", "ana", p)
	if code != 0 || !strings.Contains(out, "extracted: 1 thread done") || !strings.Contains(out, "daily token budget") {
		t.Fatalf("import = %d\n%s%s", code, out, errOut)
	}
	_, seen := codewordsSeen(llm)
	if seen["codeword-alder"] != 1 || seen["codeword-birch"] != 0 {
		t.Errorf("update prompts saw %v; want the older conversation only (oldest first, then the budget)", seen)
	}
	got := showJSON(t, dir, "--user", "ana")
	if got.PendingTurns != 1 || len(got.Facts) != 1 || !strings.Contains(got.Facts[0].Content, "codeword-alder") {
		t.Errorf("after import: %d pending, facts %+v; want 1 pending and the alder fact", got.PendingTurns, got.Facts)
	}
	if strings.Contains(out+errOut, "test-key") {
		t.Errorf("the API key was printed")
	}
}

// BenchmarkImportChatGPT imports a 10,000-message ChatGPT export into an
// empty memory on each store and reports messages/s.
func BenchmarkImportChatGPT(b *testing.B) {
	data := genChatGPTExport(100, 100)
	p := filepath.Join(b.TempDir(), "conversations.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	for _, store := range []string{"files", "postgres"} {
		b.Run(store, func(b *testing.B) {
			var db string
			if store == "postgres" {
				db = pgtest.NewDatabase(b)
			}
			n := 0
			cpu0 := processCPU()
			for b.Loop() {
				n++
				user := fmt.Sprintf("u%d", n)
				getenv := func(k string) string {
					switch k {
					case "MNEMO_DATA_DIR":
						return b.TempDir()
					case "MNEMO_STORAGE":
						return db
					}
					return ""
				}
				var out, errOut bytes.Buffer
				if code := Run(b.Context(), []string{"import", "--user", user, p}, getenv, strings.NewReader(""), &out, &errOut); code != 0 {
					b.Fatalf("import = %d %s", code, errOut.String())
				}
			}
			b.ReportMetric(float64(10000*n)/b.Elapsed().Seconds(), "messages/s")
			// The wall clock follows the machine's load; this process's CPU
			// time (not the database server's) does not.
			b.ReportMetric((processCPU()-cpu0).Seconds()/float64(n), "cpu-s/op")
		})
	}
}

// TestImportHistoryUsage: the flags of the other formats are refused with
// what to do instead.
func TestImportHistoryUsage(t *testing.T) {
	t.Parallel()
	chatgpt := filepath.Join("..", "importers", "testdata", "chatgpt", "conversations.json")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"thread", []string{"--thread", "x", chatgpt}, "--thread does not apply"},
		{"pending", []string{"--pending", chatgpt}, "--pending does not apply"},
		{"graph user on chats", []string{"--graph-user", "me", chatgpt}, "--graph-user names the user's entity"},
		{"dry run on a mnemo export", []string{"--dry-run", filepath.Join("..", "importers", "testdata", "deerflow", "memory.json")}, "--dry-run and --graph-user apply"},
		{"directory without an export", []string{"--format", "claude", t.TempDir()}, "holds no conversations.json"},
		{"unknown graph user", []string{"--graph-user", "Nobody", filepath.Join("..", "importers", "testdata", "memory-graph")}, `"Nobody" names no entity`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, errOut := runCmd(t, dir, append([]string{"import"}, tc.args...)...)
			if code == exitOK || !strings.Contains(errOut, tc.want) {
				t.Errorf("import %v = %d %q, want a refusal saying %q", tc.args, code, errOut, tc.want)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 0 {
				t.Errorf("a refused import wrote %d scopes", len(entries))
			}
		})
	}
}

// TestImportHistoryPostgres imports the ChatGPT export and the knowledge
// graph into PostgreSQL through the binary, twice: the second adds
// nothing.
func TestImportHistoryPostgres(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	env := []string{"MNEMO_STORAGE=" + pgtest.NewDatabase(t)}
	for _, p := range []string{filepath.Join("..", "importers", "testdata", "chatgpt"), filepath.Join("..", "importers", "testdata", "memory-graph")} {
		code, out, errOut := runBinary(t, env, "import", "--user", "ana", p)
		if code != 0 || !strings.Contains(out, "3 turns in 2 threads") && !strings.Contains(out, "7 facts") {
			t.Fatalf("import %s = %d\n%s%s", p, code, out, errOut)
		}
		code, out, errOut = runBinary(t, env, "import", "--user", "ana", p)
		if code != 0 || !strings.Contains(out, "0 turns") && !strings.Contains(out, "0 facts") {
			t.Fatalf("second import %s = %d\n%s%s, want nothing added", p, code, out, errOut)
		}
	}
	code, out, errOut := runBinary(t, env, "show", "--user", "ana", "--json")
	var got showOutput
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("show = %d %v %s", code, err, errOut)
	}
	if got.StoredTurns != 3 || len(got.Facts) != 7 {
		t.Errorf("stored %d turns and %d facts, want 3 and 7", got.StoredTurns, len(got.Facts))
	}
}

// hostileChatGPTConv is one conversation of a ChatGPT export, a question
// and its answer, with the given ids, title and time of the messages.
func hostileChatGPTConv(id, title, msgID string, at float64) map[string]any {
	return map[string]any{"id": id, "conversation_id": id, "title": title, "create_time": at, "current_node": msgID + "-a",
		"mapping": map[string]any{
			"root": map[string]any{"id": "root", "message": nil, "parent": nil, "children": []string{msgID}},
			msgID: map[string]any{"id": msgID, "parent": "root", "children": []string{msgID + "-a"}, "message": map[string]any{
				"id": msgID, "author": map[string]any{"role": "user"}, "create_time": at, "recipient": "all",
				"content": map[string]any{"content_type": "text", "parts": []string{"Where do I keep the boat?"}}, "metadata": map[string]any{}}},
			msgID + "-a": map[string]any{"id": msgID + "-a", "parent": msgID, "children": []string{}, "message": map[string]any{
				"id": msgID + "-a", "author": map[string]any{"role": "assistant"}, "create_time": at, "recipient": "all",
				"content": map[string]any{"content_type": "text", "parts": []string{"In the marina."}}, "metadata": map[string]any{}}},
		}}
}

// TestImportAppliesToolRules (issue 41, low 5, 6, 7): mnemo import applies
// the rules add_memory applies: a conversation whose title holds a
// terminal escape (it would be stored in meta_data), whose id or message
// id is a credential (stored as thread_id and idempotency_key), or whose
// messages are dated in the year 9999 (the "latest" statement) stores
// nothing of that conversation, and says why; a clean one beside them is
// stored. Before the fix all four were stored as they came.
func TestImportAppliesToolRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ghToken := "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"
	at := float64(time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC).Unix())
	export, _ := json.Marshal([]any{
		hostileChatGPTConv("conv-escape", "Marlin\x1b]0;pwned\x07\x1b[31m", "m-escape", at),
		hostileChatGPTConv(ghToken, "Tern", "m-cred", at+60),
		hostileChatGPTConv("conv-msgcred", "Petrel", ghToken+"x", at+120),
		hostileChatGPTConv("conv-future", "Gannet", "m-future", float64(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix())),
		hostileChatGPTConv("conv-clean", "Puffin", "m-clean", at+180),
	})
	p := filepath.Join(t.TempDir(), "conversations.json")
	if err := os.WriteFile(p, export, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, []string{"MNEMO_DATA_DIR=" + dir}, "import", "--user", "ana", p)
	t.Logf("import = %d\n%s%s", code, out, errOut)
	var stored strings.Builder
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			stored.Write(b)
		}
		return nil
	})
	for what, bad := range map[string]string{
		"a terminal escape of a title": "\x1b", "an escape written as JSON": `\u001b`, "a credential as an id": ghToken,
		"a time of the year 9999": "9999-", "the future conversation": "Gannet", "the escape's conversation": "Marlin"} {
		if strings.Contains(stored.String(), bad) {
			t.Errorf("the data directory holds %s (%q)", what, bad)
		}
	}
	if !strings.Contains(stored.String(), "Puffin") {
		t.Errorf("the clean conversation was not stored")
	}
	if !strings.Contains(out, "4 refused exchanges") || !strings.Contains(out, "the tools would refuse it too") {
		t.Errorf("import did not say it refused the four hostile conversations:\n%s%s", out, errOut)
	}
}
