package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// newApplyCountingLLM is a fake model that turns every codeword of the
// update prompt's conversation into a fact whose text also names the call
// ("codeword-abc (call 7)"), so a batch applied twice shows up as two
// facts even though the updater deduplicates equal texts. It answers
// after a random delay below maxDelay so that kills land mid-call.
func newApplyCountingLLM(t *testing.T, maxDelay time.Duration) *openaitest.Server {
	llm := openaitest.NewServer(t)
	llm.ChatFunc = codewordModel(t,
		func(w string, call int64) string { return fmt.Sprintf("%s (call %d)", w, call) },
		func() time.Duration { return rand.N(maxDelay) })
	return llm
}

// codeword returns a distinct codeword-<letters> for n.
func codeword(n int) string {
	var b []byte
	for n++; n > 0; n /= 26 {
		b = append(b, byte('a'+n%26))
	}
	return "codeword-" + string(b)
}

// ackLog collects the codewords whose add_memory was acknowledged.
type ackLog struct {
	mu    sync.Mutex
	acked map[string]bool
	next  int
}

func (a *ackLog) take() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return codeword(a.next)
}

func (a *ackLog) ack(w string) {
	a.mu.Lock()
	a.acked[w] = true
	a.mu.Unlock()
}

// drain flushes every scope thread until nothing is pending and returns
// the profile's facts.
func drain(t *testing.T, ctx context.Context, srv *mnemoProc, args map[string]any) []string {
	t.Helper()
	// Each flush_memory waits up to flush_timeout; the test's time-out
	// bounds the loop (ctx ends the calls).
	for {
		var flush struct {
			Pending struct{ Turns int } `json:"pending"`
			Reason  string              `json:"reason"`
		}
		if err := srv.tool(ctx, "flush_memory", args, &flush); err != nil {
			t.Fatal(err)
		}
		if flush.Pending.Turns == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d turns still pending when the test ended: %s", flush.Pending.Turns, flush.Reason)
		}
	}
	var prof struct {
		Facts []struct{ Content string } `json:"facts"`
	}
	if err := srv.tool(ctx, "get_user_profile", args, &prof); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(prof.Facts))
	for i, f := range prof.Facts {
		out[i] = f.Content
	}
	return out
}

// storedCodewords reads a scope's turn log straight from disk: every
// complete line must be a JSON turn; a final partial line (a write the
// kill interrupted, never acknowledged) is allowed. It returns how many
// turns mention each codeword.
func storedCodewords(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if !strings.HasSuffix(line, "\n") {
			continue // partial last line
		}
		if !json.Valid([]byte(line)) {
			t.Errorf("%s line %d is not valid JSON: %.100q", path, i+1, line)
		}
		for _, w := range codewordRE.FindAllString(line, -1) {
			out[w]++
		}
	}
	return out
}

// checkDataDir checks that every JSON file under dir parses, that every
// file is 0600 and every directory 0700, that no temp file is left, and
// that no file holds secret.
func checkDataDir(t *testing.T, dir, secret string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Errorf("walk %s: %v", p, err)
			return nil
		}
		if fi.IsDir() {
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("directory %s has mode %v, want 0700", p, fi.Mode().Perm())
			}
			return nil
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file %s has mode %v, want 0600", p, fi.Mode().Perm())
		}
		if strings.HasSuffix(p, ".tmp") || strings.Contains(p, "~deleted~") {
			t.Errorf("leftover %s", p)
		}
		data, _ := os.ReadFile(p)
		if strings.HasSuffix(p, ".json") && !json.Valid(data) {
			t.Errorf("%s is not valid JSON", p)
		}
		if secret != "" && strings.Contains(string(data), secret) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
}

// TestE2ECrashHarness SIGKILLs the real binary at random moments, 20
// times, while three clients keep storing turns and the updater keeps
// calling a slow fake model, restarting it each time. Afterwards: every
// acknowledged turn is in the turn log exactly once, every file parses,
// the pending updates were resumed and each stored turn's codeword became
// exactly one fact (nothing lost, nothing applied twice), a temp file a
// crash left is removed on start, and the API key appears nowhere.
func TestE2ECrashHarness(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	const canary = "sk-canary-crash-51d0e7"
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "data") // created by mnemo, so 0700
	llm := newApplyCountingLLM(t, 150*time.Millisecond)
	env := []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=" + canary, "MNEMO_LLM_MODEL=fake",
		"MNEMO_DEBOUNCE_SECONDS=1", "MNEMO_MAX_FACTS=10000", "MNEMO_USER_ID=crash"}
	acks := &ackLog{acked: map[string]bool{}}
	var allOutput strings.Builder
	const cycles = 20
	for cycle := range cycles {
		srv := startServer(t, dir, env...)
		srv.initialize(ctx)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for c := range 3 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					w := acks.take()
					var added addResult
					err := srv.tool(ctx, "add_memory", map[string]any{
						"user_input": "Project " + w + " starts today.", "agent_response": "Noted " + w + ".",
						"thread_id": fmt.Sprintf("client-%d", c),
					}, &added)
					if err != nil {
						return // killed mid-call: not acknowledged
					}
					if len(added.TurnIDs) == 1 {
						acks.ack(w)
					}
					if i%5 == 4 {
						var fl flushResult
						srv.tool(ctx, "flush_memory", map[string]any{"thread_id": fmt.Sprintf("client-%d", c)}, &fl)
					}
				}
			})
		}
		time.Sleep(time.Duration(150+rand.IntN(700)) * time.Millisecond)
		if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		close(stop)
		srv.wait()
		wg.Wait()
		allOutput.WriteString(srv.stderr.String())
		if cycle == cycles-1 {
			break
		}
	}
	// A temp file as a crash mid-save leaves it; the next start removes it.
	scopeDir := filepath.Join(dir, "users", "crash")
	stale := filepath.Join(scopeDir, ".memory.json.crashed.tmp")
	if err := os.WriteFile(stale, []byte(`{"half":`), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := startServer(t, dir, env...)
	srv.initialize(ctx)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file survived a start (err %v)", err)
	}
	facts := drain(t, ctx, srv, map[string]any{})
	raw, err := srv.call(ctx, "tools/call", map[string]any{"name": "retrieve_memory", "arguments": map[string]any{"query": "project"}})
	if err != nil {
		t.Fatal(err)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	allOutput.WriteString(srv.stderr.String())
	allOutput.Write(raw)

	stored := storedCodewords(t, filepath.Join(scopeDir, "turns.jsonl"))
	acks.mu.Lock()
	nAcked := len(acks.acked)
	for w := range acks.acked {
		if stored[w] != 2 { // user_input and agent_response both name it
			t.Errorf("acknowledged %s is in the turn log %d times, want once", w, stored[w]/2)
		}
	}
	acks.mu.Unlock()
	perWord := map[string]int{}
	for _, f := range facts {
		for _, w := range codewordRE.FindAllString(f, -1) {
			perWord[w]++
		}
	}
	for w := range stored {
		if perWord[w] != 1 {
			t.Errorf("stored turn %s became %d facts, want exactly 1", w, perWord[w])
		}
	}
	for w := range perWord {
		if stored[w] == 0 {
			t.Errorf("fact about %s, which is not in the turn log", w)
		}
	}
	checkDataDir(t, dir, canary)
	if strings.Contains(allOutput.String(), canary) {
		t.Errorf("the API key appears in the server's output")
	}
	t.Logf("%d kills, %d acknowledged turns, %d stored, %d facts, %d model calls", cycles, nAcked, len(stored), len(facts), len(llm.ChatRequests()))
	if nAcked < cycles {
		t.Errorf("only %d turns acknowledged over %d cycles; the harness did not exercise the server", nAcked, cycles)
	}
}

// TestE2EMultiProcess runs three server processes on one data directory,
// each with four clients calling at once over its stdio (pipelined
// requests, served by mcp-go's worker pool), then has all of them flush
// the same scope at once. Every turn must be stored once with a unique
// sequence number and become exactly one fact: no lost update of
// memory.json, no torn write, no deadlock.
func TestE2EMultiProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "data") // created by mnemo, so 0700
	llm := newApplyCountingLLM(t, 30*time.Millisecond)
	env := []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=sk-test", "MNEMO_LLM_MODEL=fake",
		"MNEMO_DEBOUNCE_SECONDS=300", "MNEMO_MAX_FACTS=10000", "MNEMO_USER_ID=shared"}
	const procs, clients, perClient = 3, 4, 10
	servers := make([]*mnemoProc, procs)
	for i := range servers {
		servers[i] = startServer(t, dir, env...)
		servers[i].initialize(ctx)
	}
	var wg sync.WaitGroup
	errs := make(chan error, procs*clients*perClient)
	for p, srv := range servers {
		for c := range clients {
			wg.Go(func() {
				for i := range perClient {
					w := codeword(((p*clients)+c)*perClient + i)
					var added addResult
					if err := srv.tool(ctx, "add_memory", map[string]any{
						"user_input": "Remember " + w + ".", "agent_response": "OK.",
						"thread_id": fmt.Sprintf("p%d-c%d", p, c),
					}, &added); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	for _, srv := range servers {
		wg.Go(func() {
			var fl flushResult
			if err := srv.tool(ctx, "flush_memory", map[string]any{}, &fl); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	facts := drain(t, ctx, servers[0], map[string]any{})
	for _, srv := range servers {
		if code := srv.stop(); code != 0 {
			t.Errorf("exit code = %d", code)
		}
	}

	// Sequence numbers are unique and dense.
	f, err := os.Open(filepath.Join(dir, "users", "shared", "turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var seq int64
	for sc.Scan() {
		var turn struct{ Seq int64 }
		if err := json.Unmarshal(sc.Bytes(), &turn); err != nil {
			t.Fatalf("torn turn log line: %v", err)
		}
		if seq++; turn.Seq != seq {
			t.Fatalf("turn %d has seq %d", seq, turn.Seq)
		}
	}
	if want := int64(procs * clients * perClient); seq != want {
		t.Errorf("turn log holds %d turns, want %d", seq, want)
	}
	perWord := map[string]int{}
	for _, fact := range facts {
		for _, w := range codewordRE.FindAllString(fact, -1) {
			perWord[w]++
		}
	}
	for n := range procs * clients * perClient {
		if w := codeword(n); perWord[w] != 1 {
			t.Errorf("%s became %d facts, want exactly 1", w, perWord[w])
		}
	}
	checkDataDir(t, dir, "sk-test")
}
