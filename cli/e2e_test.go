package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestE2EStdio(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	srv := startServer(t, dir)
	srv.initialize(ctx)

	raw, err := srv.call(ctx, "tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"add_memory", "retrieve_memory", "get_user_profile", "flush_memory"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (got %v)", want, names)
		}
	}

	var added addResult
	err = srv.tool(ctx, "add_memory", map[string]any{
		"user_input":     "I deploy the harbourmaster service to Fly.io every Friday.",
		"agent_response": "Noted: Friday deploys to Fly.io.",
		"thread_id":      "e2e",
	}, &added)
	if err != nil || len(added.TurnIDs) != 1 {
		t.Fatalf("add_memory = %+v, %v; want one turn id", added, err)
	}
	checkRetrieve(ctx, t, srv, "harbourmaster deploys", added.TurnIDs[0])

	var prof profileResult
	if err := srv.tool(ctx, "get_user_profile", map[string]any{}, &prof); err != nil || prof.StoredTurns != 1 || prof.Pending.Turns != 0 {
		t.Errorf("get_user_profile = %+v, %v; want 1 stored turn and none pending (no model: the host passes the facts)", prof, err)
	}
	var flush flushResult
	if err := srv.tool(ctx, "flush_memory", map[string]any{}, &flush); err != nil || flush.Reason == "" {
		t.Errorf("flush_memory = %+v, %v; want a reason why nothing was extracted", flush, err)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("exit code after stdin EOF = %d, want 0", code)
	}
	if !strings.Contains(srv.stderr.String(), "level=") {
		t.Errorf("no log records on stderr: %q", srv.stderr.String())
	}

	// A new process on the same data dir remembers.
	srv = startServer(t, dir)
	srv.initialize(ctx)
	checkRetrieve(ctx, t, srv, "Friday Fly.io", added.TurnIDs[0])
	if code := srv.stop(); code != 0 {
		t.Fatalf("exit code of the restarted server = %d, want 0", code)
	}
}

// checkRetrieve asserts that query finds the turn with id wantID.
func checkRetrieve(ctx context.Context, t *testing.T, srv *mnemoProc, query, wantID string) {
	t.Helper()
	var got retrieveResult
	if err := srv.tool(ctx, "retrieve_memory", map[string]any{"query": query}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) == 0 || got.Pages[0].ID != wantID {
		t.Fatalf("retrieve_memory(%q) pages = %+v, want %s first", query, got.Pages, wantID)
	}
	if !strings.Contains(got.Injection, "<memory>") || !strings.Contains(got.Injection, "Fly.io") {
		t.Errorf("retrieve_memory(%q) injection = %q, want a <memory> block with the stored text", query, got.Injection)
	}
}

func TestE2ESignal(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	ctx := t.Context()
	srv := startServer(t, t.TempDir())
	srv.initialize(ctx)
	var added addResult
	if err := srv.tool(ctx, "add_memory", map[string]any{"user_input": "hello", "agent_response": "hi"}, &added); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := srv.wait(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0", code)
	}
	if !strings.Contains(srv.stderr.String(), "signal received") {
		t.Errorf("stderr does not log the signal: %q", srv.stderr.String())
	}
}

// word returns a unique letters-only token for n, built from consonants
// so that no stemmer or stop-word list touches it.
func word(n int) string {
	const letters = "bcdfghjklmnpqrtvwxz"
	b := []byte("q")
	for range 5 {
		b = append(b, letters[n%len(letters)])
		n /= len(letters)
	}
	return string(b)
}

func TestE2ETwoProcesses(t *testing.T) {
	t.Parallel()
	const perProcess = 500
	ctx := t.Context()
	dir := t.TempDir()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		turnID = map[int]string{} // turn number → id
	)
	for p := range 2 {
		srv := startServer(t, dir)
		srv.initialize(ctx)
		wg.Go(func() {
			sem := make(chan struct{}, 8)
			var inner sync.WaitGroup
			for i := range perProcess {
				n := p*perProcess + i
				sem <- struct{}{}
				inner.Go(func() {
					defer func() { <-sem }()
					var res addResult
					err := srv.tool(ctx, "add_memory", map[string]any{
						"user_input":     fmt.Sprintf("note %s from process %d", word(n), p),
						"agent_response": "stored",
						"thread_id":      fmt.Sprintf("proc-%d", p),
					}, &res)
					if err != nil || len(res.TurnIDs) != 1 {
						t.Errorf("add_memory turn %d = %+v, %v", n, res, err)
						return
					}
					mu.Lock()
					turnID[n] = res.TurnIDs[0]
					mu.Unlock()
				})
			}
			inner.Wait()
			if code := srv.stop(); code != 0 {
				t.Errorf("process %d exit code = %d, want 0", p, code)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if len(turnID) != 2*perProcess {
		t.Fatalf("%d turns acknowledged, want %d", len(turnID), 2*perProcess)
	}

	srv := startServer(t, dir)
	srv.initialize(ctx)
	var prof profileResult
	if err := srv.tool(ctx, "get_user_profile", map[string]any{}, &prof); err != nil || prof.StoredTurns != 2*perProcess {
		t.Fatalf("get_user_profile = %+v, %v; want %d stored turns", prof, err, 2*perProcess)
	}
	for k := range 50 {
		n := k * (2 * perProcess / 50) // spread over both processes
		var got retrieveResult
		if err := srv.tool(ctx, "retrieve_memory", map[string]any{"query": word(n)}, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Pages) == 0 || got.Pages[0].ID != turnID[n] || !strings.Contains(got.Pages[0].User, word(n)) {
			t.Errorf("retrieve_memory(%s) = %+v, want turn %s first", word(n), got.Pages, turnID[n])
		}
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	checkDataFiles(t, dir, 2*perProcess)
}

// checkDataFiles parses every turn log and memory document under dir,
// checks that the logs hold want turns with unique ids and sequence numbers,
// and that files are private (0600, directories 0700).
func checkDataFiles(t *testing.T, dir string, want int) {
	t.Helper()
	turns, docs := 0, 0
	ids := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && path != dir && runtime.GOOS != "windows" {
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if info.Mode().Perm() != want {
				t.Errorf("%s has permissions %v, want %v", path, info.Mode().Perm(), want)
			}
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".jsonl":
			seqs := map[int64]bool{}
			for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				var turn struct {
					ID  string `json:"id"`
					Seq int64  `json:"seq"`
				}
				if err := json.Unmarshal(line, &turn); err != nil || turn.ID == "" {
					t.Errorf("%s line %d does not parse as a turn: %v: %q", path, i+1, err, line)
					continue
				}
				if ids[turn.ID] || seqs[turn.Seq] {
					t.Errorf("%s line %d repeats id %s or seq %d", path, i+1, turn.ID, turn.Seq)
				}
				ids[turn.ID], seqs[turn.Seq] = true, true
				turns++
			}
		case ".json":
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Errorf("%s does not parse: %v", path, err)
			}
			docs++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if turns != want {
		t.Errorf("turn logs hold %d turns, want %d", turns, want)
	}
	t.Logf("checked %d turns and %d memory documents", turns, docs)
}

// TestE2EProtocolGuard checks, through the real binary, that a tool call
// before initialize runs nothing, that ids the protocol does not allow are
// refused, and that a line far over the limit is answered with an error
// while the server keeps serving.
func TestE2EProtocolGuard(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	srv := startServer(t, dir, "MNEMO_MAX_MESSAGE_BYTES=1024", "MNEMO_MAX_MESSAGES=1")
	if _, err := srv.call(ctx, "tools/call", map[string]any{"name": "add_memory", "arguments": map[string]any{
		"user_input": "written before initialize", "agent_response": "no"}}); err == nil || !strings.Contains(err.Error(), "not initialized") {
		t.Fatalf("tools/call before initialize: err %v, want a not-initialized error", err)
	}
	srv.initialize(ctx)
	// A 4 MiB line: far over the limit derived from the settings.
	huge := map[string]any{"jsonrpc": "2.0", "id": "huge", "method": "tools/call", "params": map[string]any{
		"name": "add_memory", "arguments": map[string]any{"user_input": strings.Repeat("x", 4<<20), "agent_response": "ok"}}}
	if err := srv.send(huge); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`{"a":1}`, `[1]`, `123456789012345678901234567890`} {
		if err := srv.send(json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)); err != nil {
			t.Fatal(err)
		}
	}
	var res struct {
		TurnIDs []string `json:"turn_ids"`
	}
	if err := srv.tool(ctx, "add_memory", map[string]any{"user_input": "I keep bees.", "agent_response": "Noted."}, &res); err != nil || len(res.TurnIDs) != 1 {
		t.Fatalf("add_memory after the refused lines: %v %v", res, err)
	}
	srv.stdin.Close()
	srv.wait()
	srv.mu.Lock()
	bad := srv.bad
	srv.mu.Unlock()
	if len(bad) != 0 {
		t.Errorf("stdout lines that are not JSON-RPC: %q", bad)
	}
	data, err := os.ReadFile(filepath.Join(dir, "users", "default", "turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "before initialize") || strings.Count(string(data), "\n") != 1 {
		t.Errorf("turn log holds %q, want the one exchange after initialize", data)
	}
}
