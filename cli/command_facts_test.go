package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// TestFactsCommands saves, edits and lists facts through the memory
// service: deduplication, validation and the fact history as for the
// tools, with source cli.
func TestFactsCommands(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, dir, "facts", "add", "--user", "ana", "--category", "preference", "--confidence", "0.8", "Prefers", "Go", "over", "Python")
	if code != exitOK || !strings.Contains(out, "saved fact fact_") || !strings.Contains(out, "(preference, 0.80): Prefers Go over Python") {
		t.Fatalf("facts add = %d\n%s%s", code, out, errOut)
	}
	id := regexp.MustCompile(`fact_[0-9a-f]+`).FindString(out)
	if code, out, _ := runCmd(t, dir, "facts", "add", "--user", "ana", "prefers go over python."); code != exitOK || !strings.Contains(out, "already stored as "+id) {
		t.Errorf("facts add of the same fact = %d %s, want already stored", code, out)
	}
	if code, out, errOut := runCmd(t, dir, "facts", "edit", "--user", "ana", "--content", "Prefers Go over Python and Rust", id); code != exitOK || !strings.Contains(out, "changed content of fact "+id) {
		t.Errorf("facts edit = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, dir, "facts", "list", "--user", "ana", "--json")
	var list memory.ListResult
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil || list.Total != 1 || list.Facts[0].Content != "Prefers Go over Python and Rust" {
		t.Fatalf("facts list --json = %d %v\n%s%s", code, err, out, errOut)
	}
	if code, out, _ := runCmd(t, dir, "facts", "list", "--user", "ana"); code != exitOK || !strings.Contains(out, "1 fact of ana") || !strings.Contains(out, id) {
		t.Errorf("facts list = %d\n%s", code, out)
	}

	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := s.LoadDocument(t.Context(), memory.Scope{UserID: "ana"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range doc.FactEvents {
		if e.Source != memory.SourceCLI || e.Actor != memory.ActorCLI {
			t.Errorf("fact event %+v has source %q and actor %q, want cli", e, e.Source, e.Actor)
		}
		events = append(events, e.Event)
	}
	if len(events) != 2 {
		t.Errorf("fact history %v, want created and updated", events)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"facts", "add", "--user", "ana"}, "give the fact"},
		{[]string{"facts", "add", "--user", "ana", "--category", "mood", "x y"}, "not a category"},
		{[]string{"facts", "add", "--user", "ana", "--confidence", "2", "x y"}, "between 0 and 1"},
		{[]string{"facts", "edit", "--user", "ana", id}, "say what to change"},
		{[]string{"facts", "edit", "--user", "ana", "--content", "x", "fact_nope"}, "'mnemo facts list --user ana' lists the fact ids"},
		{[]string{"facts", "list", "--user", "ana", "--limit", "9999"}, "--limit"},
		{[]string{"facts"}, "needs one of: add, edit, restore, list"},
		{[]string{"facts", "remove"}, "needs one of"},
	} {
		code, out, errOut := runCmd(t, dir, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v = %d\n%s%s\nwant a usage error saying %q", tc.args, code, out, errOut, tc.want)
		}
		if strings.Contains(errOut, dir) || strings.Contains(errOut, "list_memories") {
			t.Errorf("%v: the error names a file or an MCP tool: %s", tc.args, errOut)
		}
	}
	if code, out, _ := runCmd(t, dir, "help", "facts", "edit"); code != exitOK || !strings.Contains(out, "mnemo facts edit") || !strings.Contains(out, "--content TEXT") {
		t.Errorf("help facts edit = %d\n%s", code, out)
	}
	if code, out, _ := runCmd(t, dir, "facts", "list", "--help"); code != exitOK || !strings.Contains(out, "mnemo facts list") {
		t.Errorf("facts list --help = %d\n%s", code, out)
	}
}
