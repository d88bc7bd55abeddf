package cli

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// TestProfileCommand sets and clears one section, keeps the replaced
// document as a version, and refuses what is not a section or a text.
func TestProfileCommand(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "ana", AgentName: "coder"}
	seedDocs(t, dir, scope, 1)
	summary := func() (string, string) {
		t.Helper()
		s, err := files.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		d, err := s.LoadDocument(t.Context(), scope)
		if err != nil {
			t.Fatal(err)
		}
		return d.User.WorkContext.Summary, d.User.TopOfMind.Summary
	}
	code, out, errOut := runCmd(t, dir, "profile", "set", "--user", "ana", "--agent", "coder", "--section", "work_context", "Writes Go at a bank.")
	if code != exitOK || !strings.Contains(out, "set work_context of ana/coder") || !strings.Contains(out, "mnemo rollback --user ana --agent coder") {
		t.Errorf("profile set = %d\n%s%s", code, out, errOut)
	}
	if work, top := summary(); work != "Writes Go at a bank." || top != "v1" {
		t.Errorf("after set: work_context %q, top_of_mind %q; want the new text and the rest untouched", work, top)
	}
	code, out, errOut = runCmd(t, dir, "profile", "clear", "--user", "ana", "--agent", "coder", "--section", "top_of_mind")
	if code != exitOK || !strings.Contains(out, "cleared top_of_mind of ana/coder") {
		t.Errorf("profile clear = %d\n%s%s", code, out, errOut)
	}
	if work, top := summary(); work != "Writes Go at a bank." || top != "" {
		t.Errorf("after clear: work_context %q, top_of_mind %q", work, top)
	}
	if code, out, _ := runCmd(t, dir, "rollback", "--user", "ana", "--agent", "coder", "--list"); code != exitOK || strings.Count(out, "\n") < 5 {
		t.Errorf("rollback --list after two changes = %d\n%s; want the replaced documents kept", code, out)
	}
	for _, args := range [][]string{
		{"profile", "--user", "ana", "--section", "work_context"},
		{"profile", "set", "--user", "ana", "work_context", "text"},
		{"profile", "set", "--user", "ana", "--section", "workContext", "text"},
		{"profile", "set", "--user", "ana", "--section", "work_context"},
		{"profile", "set", "--user", "ana", "--section", "work_context", "  "},
		{"profile", "set", "--user", "ana", "--section", "work_context", "bell \a"},
		{"profile", "clear", "--user", "ana", "--section", "work_context", "text"},
		{"profile", "wipe", "--user", "ana", "--section", "work_context"},
	} {
		if code, out, errOut := runCmd(t, dir, args...); code != exitUsage {
			t.Errorf("%q = %d, want a usage error\n%s%s", args, code, out, errOut)
		}
	}
}

// TestForgetKeepFacts: mnemo forget deletes the facts extracted from a
// thread it leaves without turns, and keeps them with --keep-facts.
func TestForgetKeepFacts(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := t.TempDir()
		scope := memory.Scope{UserID: "ana"}
		seedDocs(t, dir, scope, 1) // two turns of thread "t"
		s, err := files.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateDocument(t.Context(), scope, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000ba01", Content: "Banks at the corner", Category: "context", Confidence: 0.8, Source: "t"})
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"forget", "--user", "ana", "--thread", "t", "--yes"}
		if keep {
			args = append(args, "--keep-facts")
		}
		code, out, errOut := runCmd(t, dir, args...)
		if code != exitOK {
			t.Fatalf("%q = %d\n%s%s", args, code, out, errOut)
		}
		want := "deleted fact fact_0000ba01, extracted from thread t: Banks at the corner"
		if keep {
			want = "kept fact fact_0000ba01, extracted from thread t, which may still mention it"
		}
		if !strings.Contains(out, want) {
			t.Errorf("%q printed\n%s\nwant %q", args, out, want)
		}
	}
	if code, _, _ := runCmd(t, t.TempDir(), "forget", "--user", "ana", "--fact", "fact_00000001", "--keep-facts", "--yes"); code != exitUsage {
		t.Errorf("--keep-facts with only --fact = %d, want a usage error", code)
	}
}
