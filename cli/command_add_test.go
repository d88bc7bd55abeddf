package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// runStdin runs the program with stdin and only MNEMO_DATA_DIR set.
func runStdin(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(t.Context(), args, dataEnv(dir).get, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestAddCommand(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := runCmd(t, dir, "add", "--user", "ana", "--thread", "t1", "--input", "I moved to Lisbon.", "--reply", "Welcome to Lisbon!"); code != exitOK || !strings.Contains(out, "stored 1 turn in thread t1 of ana") {
		t.Fatalf("add = %d\n%s%s", code, out, errOut)
	}
	stdin := `{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "I keep bees."}, {"role": "assistant", "content": "Nice!"}], "thread_id": "t2", "meta_data": {"src": "script"}}`
	if code, out, errOut := runStdin(t, dir, stdin, "add", "--stdin", "--user", "ana", "--agent", "coder"); code != exitOK || !strings.Contains(out, "thread t2 of ana/coder") {
		t.Fatalf("add --stdin = %d\n%s%s", code, out, errOut)
	}
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := s.ReadTurns(t.Context(), memory.Scope{UserID: "ana", AgentName: "coder"}, 0)
	s.Close()
	if err != nil || len(turns) != 1 || turns[0].User != "I keep bees." || turns[0].Reply != "Nice!" || string(turns[0].MetaData) != `{"src":"script"}` {
		t.Errorf("stored turns = %+v, %v; want the exchange without the system message, with its meta_data", turns, err)
	}

	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"add"}, "--input TEXT --reply TEXT"},
		{"", []string{"add", "--input", "a", "--reply", "b", "--stdin"}, "not both"},
		{"not json", []string{"add", "--stdin"}, "not an add_memory JSON object"},
		{`{"user_input": "a", "agent_response": "b", "color": 1}`, []string{"add", "--stdin"}, "color"},
		{"", []string{"add", "--input", "a", "--reply", "b", "--timestamp", "yesterday"}, "timestamp"},
		{"", []string{"add", "--input", "a", "--reply", "b", "--thread", "../x"}, "--thread"},
		{`{"messages": [{"role": "wizard", "content": "x"}]}`, []string{"add", "--stdin"}, "wizard"},
	} {
		code, out, errOut := runStdin(t, dir, tc.stdin, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v <%q = %d\n%s%s\nwant a usage error saying %q", tc.args, tc.stdin, code, out, errOut, tc.want)
		}
	}
}
