package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
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
	waitBoundParallelism()
	// pgtest starts a PostgreSQL for the tests of the storage setting
	// (or uses MNEMO_TEST_POSTGRES_URL); without one they skip.
	// It also sums up the tests skipped for want of PostgreSQL or
	// Chromium in one line.
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// e2eParallel is how many parallel tests run at once unless -parallel
// says otherwise. The end-to-end tests spend their time waiting on the
// binaries they drive (and on PostgreSQL, Chromium, HAProxy), not in the
// test process: on a 2-core machine, the default of GOMAXPROCS would run
// them nearly one at a time, and on a busy machine the package's run would
// pass go test's default 10-minute time-out.
const e2eParallel = 6

// waitBoundParallelism raises -test.parallel to e2eParallel when it was
// not given.
func waitBoundParallelism() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < e2eParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(e2eParallel)); err != nil {
			fmt.Fprintf(os.Stderr, "set -test.parallel: %v\n", err)
		}
	}
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
		out, err := exec.Command("go", append(args, "github.com/mnemo-mcp/mnemo")...).CombinedOutput()
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

// mnemoProc is one running mnemo process and its JSON-RPC client side.
type mnemoProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testutil.LockedBuffer
	done   chan struct{} // closed when stdout is at EOF

	writeMu sync.Mutex
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan rpcMessage
	bad     []string // stdout lines that are not JSON-RPC 2.0
	lines   int
	// onMessage, when set (handle), sees every notification and request
	// the server sends, and the responses, in the order they arrive.
	onMessage func(rpcMessage)
}

// handle sets the function that sees every message from the server.
func (s *mnemoProc) handle(fn func(rpcMessage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onMessage = fn
}

// startServer runs the binary in serve mode on dataDir.
func startServer(t *testing.T, dataDir string, extraEnv ...string) *mnemoProc {
	t.Helper()
	cmd := exec.Command(mnemoBinary(t), "serve")
	testutil.DieWithTest(cmd)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MNEMO_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"MNEMO_DATA_DIR=" + dataDir, "MNEMO_LOG_LEVEL=debug"}, extraEnv...)...)
	s := &mnemoProc{t: t, cmd: cmd, stderr: &testutil.LockedBuffer{}, done: make(chan struct{}), pending: map[string]chan rpcMessage{}}
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
		onMessage := s.onMessage
		s.mu.Unlock()
		if onMessage != nil && err == nil {
			onMessage(m)
		}
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
	// ctx (the test's) and the server's exit are the only bounds: a slow
	// machine answers late, not never.
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
	// No deadline of its own: a mnemo that never exits is caught by go
	// test -timeout, which prints where it hangs.
	<-s.done
	err := s.cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		s.t.Errorf("wait for mnemo: %v", err)
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
