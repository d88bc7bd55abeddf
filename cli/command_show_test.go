package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

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
		t.Errorf("show --threads --json = %+v, want ana's 2 threads, 2 turns above the watermarks and no facts", got)
	}
	// With no model, show speaks as the tools do: nothing waits; with one,
	// it counts what waits for it.
	for _, tc := range []struct {
		env     env
		pending int
		says    []string
		never   []string
	}{
		{env{"MNEMO_DATA_DIR": dir, "MNEMO_USER_ID": "ana"}, 2, []string{"every one searchable", "no language model is configured"}, []string{"not yet reflected", "PENDING"}},
		{env{"MNEMO_DATA_DIR": dir, "MNEMO_USER_ID": "ana", "MNEMO_LLM_BASE_URL": "http://127.0.0.1:9/v1"}, 2, []string{"2 not yet reflected in memory", "PENDING"}, nil},
	} {
		code, out, errOut := runEnv(t, tc.env, "show", "--threads")
		if code != exitOK {
			t.Fatalf("show --threads = %d\n%s", code, errOut)
		}
		for _, w := range tc.says {
			if !strings.Contains(out, w) {
				t.Errorf("show --threads (%v) does not say %q:\n%s", tc.env, w, out)
			}
		}
		for _, w := range tc.never {
			if strings.Contains(out, w) {
				t.Errorf("show --threads (%v) says %q:\n%s", tc.env, w, out)
			}
		}
		_, out, _ = runEnv(t, tc.env, "show", "--threads", "--json")
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.PendingTurns != tc.pending {
			t.Errorf("show --threads --json (%v) pending = %d, %v; want %d", tc.env, got.PendingTurns, err, tc.pending)
		}
	}
	for _, args := range [][]string{{"show", "extra"}, {"show", "--user", "../x"}, {"show", "--user"}} {
		if code, _, errOut := runEnv(t, dataEnv(dir), args...); code != exitUsage || errOut == "" {
			t.Errorf("%v = %d %q, want a usage error", args, code, errOut)
		}
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

// TestHostileTextNeutralised stores text with terminal control sequences
// (as an LLM reply or an old version could have planted them) and checks
// that show, search and export never print them raw.
func TestHostileTextNeutralised(t *testing.T) {
	dir := t.TempDir()
	const evil = "evil \x1b]52;c;cm0gLXJmIH4=\x07 \u009b2J \x1b[31m\x00\x7f \u202eright-to-left"
	s, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ana := memory.Scope{UserID: "ana"}
	turns := storetest.NewTurns("t", 0, 1)
	turns[0].User = "tell me about sailing " + evil
	storetest.MustAppendTurns(t, s, ana, turns...)
	storetest.MustUpdateDocument(t, s, ana, func(d *memory.Document) error {
		d.Facts = []memory.Fact{{ID: "fact_0000000a", Content: "Likes sailing " + evil, Category: memory.CategoryPreference, Confidence: 0.9, CreatedAt: richTime}}
		d.User.TopOfMind = memory.Section{Summary: evil, UpdatedAt: richTime}
		return nil
	})
	s.Close()
	for _, args := range [][]string{
		{"show", "--user", "ana"}, {"show", "--user", "ana", "--json"},
		{"search", "--user", "ana", "--injection", "sailing"}, {"search", "--user", "ana", "--json", "sailing"},
		{"export", "--user", "ana"},
	} {
		code, out, errOut := runEnv(t, dataEnv(dir), args...)
		if code != exitOK {
			t.Fatalf("%q = %d\n%s", args, code, errOut)
		}
		for _, r := range out + errOut {
			if unsafeRune(r) {
				t.Errorf("%q prints %U raw", args, r)
				break
			}
		}
		if !strings.Contains(out, "sailing") {
			t.Errorf("%q does not show the text at all:\n%s", args, out)
		}
	}
}

// TestReadOnlyMissingDataDir: the commands that only read (or delete)
// say that nothing is stored when the data directory does not exist, and
// do not create it.
func TestReadOnlyMissingDataDir(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout, or in stderr when the command fails
	}{
		{[]string{"show", "--user", "ana"}, exitOK, "no memory stored in $DATA"},
		{[]string{"show", "--user", "ana", "--facts", "--json"}, exitOK, `"facts": []`},
		{[]string{"search", "--user", "ana", "sailing"}, exitOK, "no memory stored in $DATA"},
		{[]string{"search", "--user", "ana", "--json", "sailing"}, exitOK, `"pages": []`},
		{[]string{"export", "--user", "ana"}, exitError, "no memory stored in $DATA"},
		{[]string{"rollback", "--user", "ana"}, exitOK, "no memory stored in $DATA"},
		{[]string{"rollback", "--user", "ana", "--to", "1"}, exitError, "no revision to restore"},
		{[]string{"forget", "--user", "ana", "--all", "--yes"}, exitOK, "nothing is stored for ana"},
		{[]string{"forget", "--user", "ana", "--fact", "fact_1", "--yes"}, exitOK, "nothing is stored for ana"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			code, out, errOut := runEnv(t, dataEnv(dir), tc.args...)
			got := out
			if tc.code != exitOK {
				got = errOut
			}
			got = strings.ReplaceAll(got, dir, "$DATA")
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("%v = %d\nstdout %q\nstderr %q\nwant %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v created the data directory (stat: %v)", tc.args, err)
			}
		})
	}
}
