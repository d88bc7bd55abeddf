package files_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// appendRaw appends bytes to a file as another writer would.
func appendRaw(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkLogLines fails unless every line of the log parses as a turn and the
// file ends with a newline; it returns the number of lines.
func checkLogLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("%s does not end with a newline", path)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, line := range lines {
		var turn memory.Turn
		if err := json.Unmarshal([]byte(line), &turn); err != nil {
			t.Errorf("%s line %d does not parse: %v", path, i+1, err)
		}
	}
	return len(lines)
}

func TestTornLastLine(t *testing.T) {
	tests := []struct {
		name     string
		complete int  // complete turns before the torn line
		reopen   bool // a new Store (a restarted process) finds the torn line
	}{
		{"same store", 3, false},
		{"new store", 3, true},
		{"only a torn line", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			scope := memory.Scope{UserID: "torn"}
			path := filepath.Join(scopeDir(dir, scope), "turns.jsonl")
			s := mustOpen(t, dir)
			var want []memory.Turn
			if tc.complete > 0 {
				want = storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, tc.complete)...)
			} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			storetest.MustReadTurns(t, s, scope, 0) // leave a read position at the end
			appendRaw(t, path, `{"id":"turn_torn","seq":`+string(rune('0'+tc.complete+1))+`,"thread_id":"t","us`)
			if tc.reopen {
				s = mustOpen(t, dir)
			}

			if d := storetest.DiffTurns(storetest.MustReadTurns(t, s, scope, 0), want); d != "" {
				t.Errorf("ReadTurns(0) with a torn last line: %s", d)
			}
			if got := storetest.MustReadTurns(t, s, scope, int64(tc.complete)); len(got) != 0 {
				t.Errorf("ReadTurns(%d) with a torn last line = seqs %v, want none", tc.complete, storetest.Seqs(got))
			}
			next := storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", tc.complete))
			storetest.CheckSeqs(t, next, int64(tc.complete+1), int64(tc.complete+1))
			want = append(want, next...)
			if d := storetest.DiffTurns(storetest.MustReadTurns(t, s, scope, 0), want); d != "" {
				t.Errorf("ReadTurns(0) after the repair: %s", d)
			}
			if n := checkLogLines(t, path); n != tc.complete+1 {
				t.Errorf("log has %d lines, want %d", n, tc.complete+1)
			}
		})
	}
}

func TestCorruptLog(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "corrupt"}
	path := filepath.Join(scopeDir(dir, scope), "turns.jsonl")
	s := mustOpen(t, dir)
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 0))
	storetest.MustReadTurns(t, s, scope, 1)

	// A damaged line in the middle: reads fail naming file and line, appends
	// (which only need the last line) go on.
	appendRaw(t, path, "{not json}\n"+`{"id":"turn_3","seq":3,"thread_id":"t","time":"2025-01-01T00:00:00Z","stored":"2025-01-01T00:00:00Z"}`+"\n")
	for _, after := range []int64{0, 1, 2, 3} {
		_, err := s.ReadTurns(t.Context(), scope, after)
		if !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ReadTurns(%d) error = %v, want memory.ErrCorrupt naming %s and line 2", after, err, path)
		}
	}
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 3)), 4, 4)

	// A damaged last line: the next Seq is unknown, so appends refuse and
	// leave the file alone.
	appendRaw(t, path, "garbage\n")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*files.Store{s, mustOpen(t, dir)} {
		if _, err := st.AppendTurns(t.Context(), scope, storetest.NewTurns("t", 4, 1)); !errors.Is(err, memory.ErrCorrupt) {
			t.Errorf("AppendTurns after a damaged last line: error = %v, want memory.ErrCorrupt", err)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("a refused append changed the log")
	}
}

func TestTwoStoresConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "two", AgentName: "stores"}
	stores := []memory.Store{mustOpen(t, dir), mustOpen(t, dir)}
	storetest.ConcurrentAppend(t, stores, scope, 4, 250)
	if n := checkLogLines(t, filepath.Join(scopeDir(dir, scope), "turns.jsonl")); n != 2000 {
		t.Errorf("log has %d lines, want 2000", n)
	}
}

// TestLogRemoved checks that a turn log deleted behind the store's back is
// recreated, not appended to through a stale descriptor.
func TestLogRemoved(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "removed"}
	s := mustOpen(t, dir)
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, 3)...)
	if err := os.Remove(filepath.Join(scopeDir(dir, scope), "turns.jsonl")); err != nil {
		t.Fatal(err)
	}
	if got := storetest.MustReadTurns(t, s, scope, 0); len(got) != 0 {
		t.Errorf("ReadTurns after removal = seqs %v, want none", storetest.Seqs(got))
	}
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 0)), 1, 1)
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, s, scope, 0), 1, 1)
}

// TestLogRewritten rewrites the log in place with longer lines, so that a
// remembered read position falls inside a line; reads must notice and
// start over rather than fail or skip.
func TestLogRewritten(t *testing.T) {
	dir := t.TempDir()
	scope := memory.Scope{UserID: "rewritten"}
	path := filepath.Join(scopeDir(dir, scope), "turns.jsonl")
	s := mustOpen(t, dir)
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, 3)...)
	storetest.MustReadTurns(t, s, scope, 3)

	want := storetest.NewTurns("longer-thread-name", 0, 4)
	var data []byte
	for i := range want {
		want[i].Seq = int64(i + 1)
		line, err := json.Marshal(want[i])
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if d := storetest.DiffTurns(storetest.MustReadTurns(t, s, scope, 3), want[3:]); d != "" {
		t.Errorf("ReadTurns(3) after the rewrite: %s", d)
	}
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 9)), 5, 5)
}
