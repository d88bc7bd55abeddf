package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests build the real binary once per test binary and talk
// to it over real stdio pipes with a small hand-written JSON-RPC client.

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// mnemoBinary builds the module root into a temp dir, with -race when the
// tests themselves run with -race.
func mnemoBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: builds and runs the binary")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "mnemo-e2e-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mnemo")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		args := []string{"build", "-o", binPath}
		if raceEnabled() {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// rpcMessage is any JSON-RPC 2.0 message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// lockedBuffer collects the child's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mnemoProc is one running mnemo process and its JSON-RPC client side.
type mnemoProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	done   chan struct{} // closed when stdout is at EOF

	writeMu sync.Mutex
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan rpcMessage
	bad     []string // stdout lines that are not JSON-RPC 2.0
	lines   int
}

// startServer runs the binary in serve mode on dataDir.
func startServer(t *testing.T, dataDir string, extraEnv ...string) *mnemoProc {
	t.Helper()
	cmd := exec.Command(mnemoBinary(t), "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MNEMO_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"MNEMO_DATA_DIR=" + dataDir, "MNEMO_LOG_LEVEL=debug"}, extraEnv...)...)
	s := &mnemoProc{t: t, cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{}), pending: map[string]chan rpcMessage{}}
	cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go s.read(stdout)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// read checks every stdout line and hands responses to their callers.
func (s *mnemoProc) read(stdout io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m rpcMessage
		err := json.Unmarshal(line, &m)
		isResponse := len(m.ID) > 0 && (m.Result != nil) != (m.Error != nil) && m.Method == ""
		isRequest := m.Method != "" && m.Result == nil && m.Error == nil
		s.mu.Lock()
		s.lines++
		if err != nil || m.JSONRPC != "2.0" || !isResponse && !isRequest {
			s.bad = append(s.bad, string(line))
		}
		ch := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		s.mu.Unlock()
		if isResponse && ch != nil {
			ch <- m
		}
	}
}

// send writes one message as a line.
func (s *mnemoProc) send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err = s.stdin.Write(append(data, '\n'))
	return err
}

// call sends a request and waits for its response; safe for concurrent use.
func (s *mnemoProc) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.nextID.Add(1)
	ch := make(chan rpcMessage, 1)
	s.mu.Lock()
	s.pending[fmt.Sprint(id)] = ch
	s.mu.Unlock()
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	case <-s.done:
		return nil, fmt.Errorf("%s: server closed stdout", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// initialize runs the MCP handshake.
func (s *mnemoProc) initialize(ctx context.Context) {
	s.t.Helper()
	res, err := s.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mnemo-e2e", "version": "1"},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	var init struct {
		ProtocolVersion string                `json:"protocolVersion"`
		ServerInfo      struct{ Name string } `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.ServerInfo.Name == "" || init.ProtocolVersion == "" {
		s.t.Fatalf("initialize result = %s (%v)", res, err)
	}
	if err := s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		s.t.Fatal(err)
	}
}

// tool calls a tool and decodes its structured result into out.
func (s *mnemoProc) tool(ctx context.Context, name string, args map[string]any, out any) error {
	raw, err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct{ Text string }
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError || len(res.StructuredContent) == 0 {
		return fmt.Errorf("%s: tool error or no structured content: %s", name, raw)
	}
	return json.Unmarshal(res.StructuredContent, out)
}

// stop closes stdin (the host going away) and returns the exit code; it
// also checks that stdout carried only JSON-RPC.
func (s *mnemoProc) stop() int {
	s.t.Helper()
	s.stdin.Close()
	return s.wait()
}

func (s *mnemoProc) wait() int {
	s.t.Helper()
	errc := make(chan error, 1)
	go func() { <-s.done; errc <- s.cmd.Wait() }()
	select {
	case err := <-errc:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			s.t.Errorf("wait for mnemo: %v", err)
			return -1
		}
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		s.t.Errorf("mnemo did not exit within 60s")
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bad) > 0 {
		s.t.Errorf("%d of %d stdout lines are not JSON-RPC 2.0 messages, first: %q", len(s.bad), s.lines, s.bad[0])
	}
	return s.cmd.ProcessState.ExitCode()
}

// Result shapes used by the tests (subsets of the tools' outputs).
type (
	addResult struct {
		TurnIDs []string `json:"turn_ids"`
	}
	retrieveResult struct {
		Pages []struct {
			ID   string `json:"id"`
			User string `json:"user_input"`
		} `json:"pages"`
		Injection   string `json:"injection"`
		StoredTurns int    `json:"stored_turns"`
	}
	profileResult struct {
		StoredTurns int `json:"stored_turns"`
		Pending     struct {
			Turns int `json:"turns"`
		} `json:"pending"`
	}
	flushResult struct {
		Reason string `json:"reason"`
	}
)

func TestE2EStdio(t *testing.T) {
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
	if err := srv.tool(ctx, "get_user_profile", map[string]any{}, &prof); err != nil || prof.StoredTurns != 1 || prof.Pending.Turns != 1 {
		t.Errorf("get_user_profile = %+v, %v; want 1 stored turn, 1 pending", prof, err)
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

// checkDataFiles parses every turn log and memory document under dir and
// checks that the logs hold want turns with unique ids and sequence numbers.
func checkDataFiles(t *testing.T, dir string, want int) {
	t.Helper()
	turns, docs := 0, 0
	ids := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
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
