package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// Words that only forgotten texts hold (lower case, their own stems, so
// the page index stores them as written): in one turn of thread "home",
// in the turns of thread "vault" and the fact extracted from it, and in a
// saved fact.
const (
	e2eTurnWord   = "zanzibar"
	e2eThreadWord = "kilimanjaro"
	e2eFactWord   = "serengeti"
)

// seedForgetData writes, through the file store, what servers would have
// stored in scope: 600 turns around the secret ones, a saved fact with the
// fact word (changed once, so its history and kept versions hold it) and
// a fact extracted from thread "vault". The user's own memory holds a
// turn and a fact without the words.
func seedForgetData(t *testing.T, dir string, scope memory.Scope) {
	t.Helper()
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	user := memory.Scope{UserID: scope.UserID}
	if scope != user {
		storetest.MustAppendTurns(t, s, user, storetest.NewTurns("garden", 1, 2)...)
	}
	turns := storetest.NewTurns("filler", 1, 600)
	home := storetest.NewTurn("home", 1)
	home.ID, home.User = "turn_home_secret", "I keep the spare key under the "+e2eTurnWord+" doormat"
	v1, v2 := storetest.NewTurn("vault", 1), storetest.NewTurn("vault", 2)
	v1.User, v2.User = "The "+e2eThreadWord+" account number is 4471", "Its "+e2eThreadWord+" password hint is blue"
	turns = append(turns, storetest.NewTurn("home", 2), home, storetest.NewTurn("home", 3), v1, v2)
	storetest.MustAppendTurns(t, s, scope, turns...)
	fact := "Keeps a spare key under the " + e2eFactWord + " doormat"
	steps := []func(d *memory.Document){
		func(d *memory.Document) {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000f001", Content: fact, Category: "context", Confidence: 0.9, Source: memory.SourceManual})
			d.AddFactEvent(memory.FactEvent{FactID: "fact_0000f001", Event: memory.FactCreated, Source: memory.SourceManual, Content: fact})
		},
		func(d *memory.Document) {
			d.Facts[0].Content = fact + " by the back door"
			d.AddFactEvent(memory.FactEvent{FactID: "fact_0000f001", Event: memory.FactUpdated, Source: memory.SourceManual, Content: d.Facts[0].Content})
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000ba01", Content: "Has a " + e2eThreadWord + " account", Category: "context", Confidence: 0.8, Source: "vault"})
			d.Watermarks = map[string]int64{"filler": 600, "home": 603, "vault": 605}
		},
		func(d *memory.Document) {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000f002", Content: "Likes tuna", Category: "preference", Confidence: 0.9, Source: memory.SourceManual})
		},
	}
	for _, step := range steps {
		storetest.MustUpdateDocument(t, s, scope, func(d *memory.Document) error { step(d); return nil })
	}
	if scope != user {
		storetest.MustUpdateDocument(t, s, user, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000aa01", Content: "Waters the plants", Category: "context", Confidence: 0.9, Source: memory.SourceManual})
			return nil
		})
	}
}

// TestE2EForgetLeavesNoTrace: two `mnemo serve` processes share a data
// directory; after each kind of forget, through the forget_memory tool of
// one or `mnemo forget`, no file of the directory holds the forgotten
// text — right after it, after the other process (which had the scope
// loaded and new pages to snapshot) shuts down, and after a restart — the
// forgotten scopes are not recreated, and the other process logs no
// warning about it.
func TestE2EForgetLeavesNoTrace(t *testing.T) {
	t.Parallel()
	bin := mnemoBinary(t)
	agent := memory.Scope{UserID: "bob", AgentName: "coder"}
	user := memory.Scope{UserID: "bob"}
	tests := []struct {
		name  string
		scope memory.Scope
		words []string
		tool  map[string]any // forget_memory arguments
		cli   []string       // mnemo forget arguments
		gone  string
	}{
		{name: "fact", scope: user, words: []string{e2eFactWord},
			tool: map[string]any{"user_id": "bob", "fact_ids": []string{"fact_0000f001"}},
			cli:  []string{"--user", "bob", "--fact", "fact_0000f001"}},
		{name: "turn", scope: user, words: []string{e2eTurnWord},
			tool: map[string]any{"user_id": "bob", "turn_ids": []string{"turn_home_secret"}},
			cli:  []string{"--user", "bob", "--turn", "turn_home_secret"}},
		{name: "thread", scope: agent, words: []string{e2eThreadWord},
			tool: map[string]any{"user_id": "bob", "agent_name": "coder", "thread_id": "vault"},
			cli:  []string{"--user", "bob", "--agent", "coder", "--thread", "vault"}},
		{name: "agent", scope: agent, words: []string{e2eTurnWord, e2eThreadWord, e2eFactWord}, gone: "users/bob/agents/coder",
			tool: map[string]any{"user_id": "bob", "agent_name": "coder", "all": true, "confirm": memory.ForgetEverything},
			cli:  []string{"--user", "bob", "--agent", "coder", "--all"}},
		{name: "user", scope: agent, words: []string{e2eTurnWord, e2eThreadWord, e2eFactWord}, gone: "users/bob",
			tool: map[string]any{"user_id": "bob", "all": true, "confirm": memory.ForgetEverything},
			cli:  []string{"--user", "bob", "--all"}},
	}
	for _, tc := range tests {
		for _, via := range []string{"tool", "cli"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				ctx := t.Context()
				dir := t.TempDir()
				seedForgetData(t, dir, tc.scope)
				scopeArgs := map[string]any{"user_id": tc.scope.UserID}
				if tc.scope.AgentName != "" {
					scopeArgs["agent_name"] = tc.scope.AgentName
				}
				retrieve := func(srv *mnemoProc, query string) retrieveResult {
					t.Helper()
					args := map[string]any{"query": query}
					for k, v := range scopeArgs {
						args[k] = v
					}
					var got retrieveResult
					if err := srv.tool(ctx, "retrieve_memory", args, &got); err != nil {
						t.Fatal(err)
					}
					return got
				}
				// A first server indexes the log and snapshots it at
				// shutdown, so the words are in pages.idx too.
				first := startServer(t, dir)
				first.initialize(ctx)
				retrieve(first, "key")
				if code := first.stop(); code != 0 {
					t.Fatalf("first server exit code = %d", code)
				}
				for _, w := range tc.words {
					hits := testutil.GrepFiles(t, dir, w)
					if w == e2eFactWord && !slices.ContainsFunc(hits, func(h string) bool { return strings.Contains(h, "versions/") }) ||
						w != e2eFactWord && !slices.ContainsFunc(hits, func(h string) bool { return strings.HasSuffix(h, "pages.idx") }) {
						t.Fatalf("before the forget %q is in %v; the test needs it in a kept version (facts) or pages.idx (turns)", w, hits)
					}
				}
				// More turns arrive (from elsewhere) that the other server
				// indexes, so that it has a snapshot to save at shutdown.
				more, err := files.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				storetest.MustAppendTurns(t, more, tc.scope, storetest.NewTurns("more", 1, 520)...)
				more.Close()
				other := startServer(t, dir)
				other.initialize(ctx)
				retrieve(other, strings.Join(tc.words, " "))

				if via == "tool" {
					srv := startServer(t, dir)
					srv.initialize(ctx)
					var res memory.ForgetResult
					if err := srv.tool(ctx, "forget_memory", tc.tool, &res); err != nil {
						t.Fatal(err)
					}
					if code := srv.stop(); code != 0 {
						t.Errorf("forgetting server exit code = %d", code)
					}
				} else {
					cmd := exec.Command(bin, append(append([]string{"forget"}, tc.cli...), "--yes")...)
					cmd.Env = append(os.Environ(), "MNEMO_DATA_DIR="+dir)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("mnemo forget: %v\n%s", err, out)
					}
				}
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("right after the forget, %v are in %v", tc.words, hits)
				}
				if code := other.stop(); code != 0 {
					t.Errorf("other server exit code = %d", code)
				}
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("after the other server shut down, %v are in %v", tc.words, hits)
				}
				if tc.gone != "" {
					if _, err := os.Lstat(filepath.Join(dir, tc.gone)); err == nil {
						t.Errorf("%s was written again after it was forgotten", tc.gone)
					}
				}
				if log := other.stderr.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
					t.Errorf("the other server logged warnings:\n%s", log)
				}

				again := startServer(t, dir)
				again.initialize(ctx)
				got := retrieve(again, strings.Join(tc.words, " "))
				for _, w := range tc.words {
					if strings.Contains(strings.ToLower(got.Injection), w) {
						t.Errorf("after a restart, retrieve_memory still gives %q: %s", w, got.Injection)
					}
				}
				if code := again.stop(); code != 0 {
					t.Errorf("restarted server exit code = %d", code)
				}
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("after a restart, %v are in %v", tc.words, hits)
				}
			})
		}
	}
}
