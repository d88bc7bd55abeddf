package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// TestForgetCommand deletes one user's memory and checks that every file
// of it is gone and no other user's memory was touched, including users
// whose names look alike.
func TestForgetCommand(t *testing.T) {
	dir := t.TempDir()
	victims := []memory.Scope{{UserID: "ana"}, {UserID: "ana", AgentName: "coder"}}
	others := []memory.Scope{{UserID: "ana2"}, {UserID: "an"}, {UserID: "bob", AgentName: "ana"}}
	for _, sc := range append(victims, others...) {
		seedDocs(t, dir, sc, 2)
	}
	snap := func(sc memory.Scope) string {
		p := filepath.Join(dir, "users", sc.UserID)
		if sc.AgentName != "" {
			p = filepath.Join(p, "agents", sc.AgentName)
		}
		var b strings.Builder
		filepath.Walk(p, func(path string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.Contains(path, string(filepath.Separator)+"agents"+string(filepath.Separator)) || sc.AgentName != "" {
				data, _ := os.ReadFile(path)
				b.WriteString(path + "\n" + string(data))
			}
			return nil
		})
		return b.String()
	}
	before := map[memory.Scope]string{}
	for _, sc := range others {
		before[sc] = snap(sc)
	}

	// An empty value is never "all", and the whole memory goes only with
	// --all: none of these deletes anything.
	for _, args := range [][]string{
		{"forget", "--user", "ana", "--yes"},
		{"forget", "--user", "ana", "--thread", "", "--yes"},
		{"forget", "--user", "ana", "--thread", "  ", "--yes"},
		{"forget", "--user", "ana", "--agent", "", "--all", "--yes"},
		{"forget", "--user", "", "--all", "--yes"},
		{"forget", "--user=", "--all", "--yes"},
		{"forget", "--user", "ana", "--fact", "", "--yes"},
	} {
		if code, out, errOut := runCmd(t, dir, args...); code != exitUsage {
			t.Errorf("%q = %d, want a usage error\n%s%s", args, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "users", "ana", "agents", "coder", "memory.json")); err != nil {
			t.Fatalf("%q deleted something: %v", args, err)
		}
	}

	code, out, errOut := runCmd(t, dir, "forget", "--user", "ana", "--all")
	if code == exitOK || !strings.Contains(errOut, "--yes") || !strings.Contains(out, "ana/coder") {
		t.Fatalf("forget without --yes = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "users", "ana", "memory.json")); err != nil {
		t.Fatalf("forget without --yes deleted something: %v", err)
	}
	if code, out, errOut = runCmd(t, dir, "forget", "--user", "ana", "--all", "--yes"); code != exitOK {
		t.Fatalf("forget --yes = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "users", "ana")); !os.IsNotExist(err) {
		t.Errorf("users/ana still exists after forget (err %v)", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "users"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "ana~") {
			t.Errorf("leftover %s", e.Name())
		}
	}
	for _, sc := range others {
		if snap(sc) != before[sc] {
			t.Errorf("forgetting ana changed the memory of %s", sc.Key())
		}
	}
	if code, out, _ := runCmd(t, dir, "forget", "--user", "ana", "--all", "--yes"); code != exitOK || !strings.Contains(out, "nothing is stored") {
		t.Errorf("second forget = %d %s, want nothing to do", code, out)
	}
	if code, _, errOut := runCmd(t, dir, "forget", "--all", "--yes"); code != exitUsage || !strings.Contains(errOut, "--user") {
		t.Errorf("forget without --user = %d %s, want a usage error naming --user", code, errOut)
	}
}

// TestForgetPartsCommand deletes one fact and one thread through the CLI and
// leaves everything else of the scope in place.
func TestForgetPartsCommand(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, counter)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := svc.SaveFact(ctx, memory.SaveFactRequest{UserID: "ana", Content: "Ana keeps bees", Category: memory.CategoryContext, Confidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	drop, err := svc.SaveFact(ctx, memory.SaveFactRequest{UserID: "ana", Content: "Ana's PIN is 1234", Category: memory.CategoryContext, Confidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for i, thread := range []string{"keep", "secret", "secret"} {
		// Distinct exchanges: the same one again would be a client retry.
		if _, err := svc.Add(ctx, memory.AddRequest{UserID: "ana", ThreadID: thread, UserInput: fmt.Sprintf("thread %s, exchange %d", thread, i), AgentResponse: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	if code, out, errOut := runCmd(t, dir, "forget", "--user", "ana", "--fact", drop.Fact.ID, "--thread", "secret"); code == exitOK || !strings.Contains(errOut, "--yes") {
		t.Fatalf("forget parts without --yes = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCmd(t, dir, "forget", "--user", "ana", "--fact", drop.Fact.ID, "--thread", "secret", "--yes")
	if code != exitOK || !strings.Contains(out, "deleted 1 fact(s) and 2 exchange(s)") {
		t.Fatalf("forget parts = %d\n%s%s", code, out, errOut)
	}
	store, err = files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	doc, err := store.LoadDocument(ctx, memory.Scope{UserID: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Facts) != 1 || doc.Facts[0].ID != keep.Fact.ID {
		t.Errorf("facts after forget = %+v, want only %s", doc.Facts, keep.Fact.ID)
	}
	turns, err := store.ReadTurns(ctx, memory.Scope{UserID: "ana"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].ThreadID != "keep" {
		t.Errorf("turns after forget = %+v, want only thread keep", turns)
	}
}

// TestForgetOutput: the result goes to stdout, messages to stderr, and a
// not-found error names the commands that show what is stored, not an
// MCP tool.
func TestForgetOutput(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	code, out, errOut := runCmd(t, dir, "forget", "--user", "ana", "--fact", "fact_0000000a", "--yes")
	if code != exitOK || !strings.Contains(out, "deleted fact fact_0000000a") || !strings.Contains(out, "deleted 1 fact(s)") || errOut != "" {
		t.Errorf("forget --fact = %d\nstdout %q\nstderr %q; want the result on stdout and nothing on stderr", code, out, errOut)
	}
	code, out, errOut = runCmd(t, dir, "forget", "--user", "ana", "--agent", "coder", "--fact", "fact_nope", "--yes")
	if code == exitOK || out != "" || !strings.Contains(errOut, "no fact_nope") || !strings.Contains(errOut, "mnemo show --user ana --agent coder") {
		t.Errorf("forget of a missing fact = %d\nstdout %q\nstderr %q; want an error on stderr naming mnemo show", code, out, errOut)
	}
	for _, tool := range []string{"list_memories", "retrieve_memory", "forget_memory"} {
		if strings.Contains(errOut, tool) {
			t.Errorf("forget's error names the MCP tool %s: %q", tool, errOut)
		}
	}
}
