package cli

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestRollbackCommand(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "ana", AgentName: "coder"}
	seedDocs(t, dir, scope, 4)

	code, out, errOut := runCmd(t, dir, "rollback", "--user", "ana", "--agent", "coder", "--list")
	if code != exitOK || !strings.Contains(out, "current revision 4") || !strings.Contains(out, "\n3 ") || !strings.Contains(out, "\n1 ") {
		t.Fatalf("rollback --list = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, dir, "rollback", "--user=ana", "--agent=coder", "--to", "2")
	if code != exitOK || !strings.Contains(out, "restored revision 2") || !strings.Contains(out, "--to 4") {
		t.Fatalf("rollback --to 2 = %d\n%s%s", code, out, errOut)
	}
	if sum, rev := loadSummary(t, dir, scope); sum != "v2" || rev != 5 {
		t.Errorf("after rollback: summary %q revision %d, want v2 revision 5", sum, rev)
	}
	// The rollback can itself be rolled back.
	if code, out, errOut = runCmd(t, dir, "rollback", "--user", "ana", "--agent", "coder", "--to", "4"); code != exitOK {
		t.Fatalf("undo rollback = %d\n%s%s", code, out, errOut)
	}
	if sum, _ := loadSummary(t, dir, scope); sum != "v4" {
		t.Errorf("after undoing the rollback: summary %q, want v4", sum)
	}
	for _, args := range [][]string{
		{"rollback", "--user", "ana", "--agent", "coder", "--to", "99"},
		{"rollback", "--user", "../x", "--list"},
		{"rollback", "--to", "abc"},
		{"rollback", "--to"},
	} {
		if code, out, errOut := runCmd(t, dir, args...); code == exitOK || errOut == "" {
			t.Errorf("%v = %d, want a failure that says why\n%s%s", args, code, out, errOut)
		}
	}
}
