package cli

import (
	"bytes"
	"os"
	"path/filepath"
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
	if *updateGolden {
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

// runCmd runs the program in-process with only MNEMO_DATA_DIR set.
func runCmd(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		if k == "MNEMO_DATA_DIR" {
			return dir
		}
		return ""
	}
	code = Run(t.Context(), args, getenv, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// seedDocs saves n revisions of scope's document, the i-th with summary
// "v<i>".
func seedDocs(t *testing.T, dir string, scope memory.Scope, n int) {
	t.Helper()
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, 2)...)
	for i := 1; i <= n; i++ {
		storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			d.User.TopOfMind.Summary = "v" + string(rune('0'+i))
			return nil
		})
	}
}

func loadSummary(t *testing.T, dir string, scope memory.Scope) (string, int64) {
	t.Helper()
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := storetest.MustLoadDocument(t, s, scope)
	return d.User.TopOfMind.Summary, d.Revision
}

// clipBytes is b as text, cut to n bytes for a failure message.
func clipBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
